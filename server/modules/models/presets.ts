import { ConfigError } from '../../common/errors';
import type { ProviderConfig } from '../../config';

// === Provider presets
// A preset fills `base_url` and `api_key_env` for a known service; values in the config win.

export type PresetName = ProviderConfig['preset'];

/** What a preset contributes. */
export interface PresetDefinition {
  /** OpenAI-compatible base URL (null: must come from config). */
  baseUrl: string | null;
  /** Env variable holding the API key (null: no key by default). */
  apiKeyEnv: string | null;
  /** Whether calls fail without a key (hosted services); local servers accept none. */
  requiresApiKey: boolean;
  /** Request field for the output limit: OpenAI's reasoning models reject `max_tokens`. */
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  /** Default model when the config names none (only the mock has one). */
  model: string | null;
}

export const MODEL_PRESETS = {
  ollama: { baseUrl: 'http://127.0.0.1:11434/v1', apiKeyEnv: null, requiresApiKey: false, maxTokensParam: 'max_tokens', model: null },
  openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', requiresApiKey: true, maxTokensParam: 'max_completion_tokens', model: null },
  openrouter: { baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'OPENROUTER_API_KEY', requiresApiKey: true, maxTokensParam: 'max_tokens', model: null },
  nvidia: { baseUrl: 'https://integrate.api.nvidia.com/v1', apiKeyEnv: 'NVIDIA_API_KEY', requiresApiKey: true, maxTokensParam: 'max_tokens', model: null },
  vllm: { baseUrl: 'http://127.0.0.1:8000/v1', apiKeyEnv: null, requiresApiKey: false, maxTokensParam: 'max_tokens', model: null },
  lmstudio: { baseUrl: 'http://127.0.0.1:1234/v1', apiKeyEnv: null, requiresApiKey: false, maxTokensParam: 'max_tokens', model: null },
  custom: { baseUrl: null, apiKeyEnv: null, requiresApiKey: false, maxTokensParam: 'max_tokens', model: null },
  mock: { baseUrl: null, apiKeyEnv: null, requiresApiKey: false, maxTokensParam: 'max_tokens', model: 'mock-1' },
} as const satisfies Record<PresetName, PresetDefinition>;

/** Settings shared by every resolved provider. */
interface ResolvedCommon {
  name: string;
  preset: PresetName;
  /** Default model (config `model`, else the preset's), or null when neither names one. */
  model: string | null;
  contextWindow: number;
  maxConcurrency: number;
  timeoutMs: number;
  supportsTools: boolean;
  supportsVision: boolean;
}

/** A provider entry after presets and env were applied; secrets are resolved but never logged. */
export type ResolvedProviderConfig =
  | (ResolvedCommon & { kind: 'mock' })
  | (ResolvedCommon & {
      kind: 'openai-compatible';
      baseUrl: string;
      /** The key itself (null: send no Authorization header). */
      apiKey: string | null;
      /** Where the key came from, for messages. */
      apiKeyEnv: string | null;
      maxTokensParam: PresetDefinition['maxTokensParam'];
    });

/**
 * Applies the preset and the environment to one `ai.providers.<name>` entry. Throws `ConfigError` (naming
 * the key or env variable and the fix) when a hosted preset has no API key, or `custom` has no base URL.
 */
export function resolveProviderConfig(name: string, config: ProviderConfig, env: NodeJS.ProcessEnv = process.env): ResolvedProviderConfig {
  const preset: PresetDefinition = MODEL_PRESETS[config.preset];
  const common: ResolvedCommon = {
    name,
    preset: config.preset,
    model: config.model ?? preset.model,
    contextWindow: config.context_window,
    maxConcurrency: config.max_concurrency,
    timeoutMs: config.timeout_ms,
    supportsTools: config.supports_tools,
    supportsVision: config.supports_vision,
  };
  if (config.preset === 'mock') return { ...common, kind: 'mock' };

  const baseUrl = (config.base_url ?? preset.baseUrl)?.replace(/\/+$/, '');
  if (!baseUrl) {
    throw new ConfigError(
      `config key "ai.providers.${name}.base_url" is required for preset "${config.preset}". Fix: set it to the server's OpenAI-compatible URL, e.g. http://127.0.0.1:8080/v1, or pick a preset (${Object.keys(MODEL_PRESETS).join(', ')}).`,
    );
  }
  try {
    new URL(baseUrl);
  } catch {
    throw new ConfigError(`config key "ai.providers.${name}.base_url": "${redactUrl(baseUrl)}" is not a URL. Fix: use e.g. http://127.0.0.1:11434/v1.`);
  }
  const apiKeyEnv = config.api_key_env ?? preset.apiKeyEnv;
  const apiKey = apiKeyEnv ? env[apiKeyEnv]?.trim() || null : null;
  if (preset.requiresApiKey && !apiKey) {
    const variable = apiKeyEnv ?? preset.apiKeyEnv ?? 'an API key variable';
    throw new ConfigError(
      `config key "ai.providers.${name}": preset "${config.preset}" needs an API key, but the environment variable ${variable} is not set. Fix: export ${variable}=<your key>, or set ai.providers.${name}.api_key_env to the variable that holds it.`,
    );
  }
  return { ...common, kind: 'openai-compatible', baseUrl, apiKey, apiKeyEnv, maxTokensParam: preset.maxTokensParam };
}

/** Removes user:password from a URL so it can appear in logs and errors. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}
