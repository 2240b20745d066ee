import { ConfigError } from '../../common/errors';
import type { AppConfig, ProviderConfig } from '../../config';
import { probeOllama, redactUrl, resolveProviderConfig } from '../../modules/models';
import { describeError, type CheckResult } from './check';

const TIMEOUT_MS = 3000;
/** Where the model router looks for a local Ollama when no provider is configured. */
const LOCAL_OLLAMA_URL = 'http://127.0.0.1:11434/v1';

type Probe = { ok: true; models: number | null } | { ok: false; status?: number; error: string };

async function probeModels(baseUrl: string, apiKey: string | null): Promise<Probe> {
  try {
    const res = await fetch(`${baseUrl}/models`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return { ok: false, status: res.status, error: `HTTP ${res.status}` };
    }
    const body = (await res.json().catch(() => null)) as { data?: unknown } | null;
    return { ok: true, models: Array.isArray(body?.data) ? body.data.length : null };
  } catch (err) {
    return { ok: false, error: describeError(err) };
  }
}

function modelCount(n: number | null): string {
  return n === null ? '' : ` (${n} model${n === 1 ? '' : 's'})`;
}

/**
 * One check per configured provider, resolved with its preset and API key exactly as the model router
 * does: GET `<base_url>/models` answers within 3 s. With none configured, looks for the local Ollama the
 * router would use, and warns that the mock provider answers otherwise.
 */
export async function checkProviders(config: AppConfig, env: NodeJS.ProcessEnv): Promise<CheckResult[]> {
  const entries = Object.entries(config.ai.providers);
  if (!entries.length) {
    const model = await probeOllama(LOCAL_OLLAMA_URL, TIMEOUT_MS);
    if (model) {
      return [
        {
          name: 'model provider',
          verdict: 'ok',
          message: `none configured; the local Ollama at ${LOCAL_OLLAMA_URL} answers (model ${model})`,
        },
      ];
    }
    return [
      {
        name: 'model provider',
        verdict: 'warn',
        message: 'no model provider configured; the mock provider will answer',
        hint: 'set MUNINN_MODEL_BASE_URL (and MUNINN_MODEL_API_KEY), add ai.providers, or start Ollama with a model',
      },
    ];
  }
  return Promise.all(entries.map(([name, provider]) => checkProvider(name, provider, env)));
}

async function checkProvider(
  name: string,
  provider: ProviderConfig,
  env: NodeJS.ProcessEnv,
): Promise<CheckResult> {
  const label = `provider ${name}`;
  let resolved;
  try {
    resolved = resolveProviderConfig(name, provider, env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { name: label, verdict: 'FAIL', message: err.message };
  }
  if (resolved.kind === 'mock') {
    return { name: label, verdict: 'ok', message: 'mock provider; nothing to reach' };
  }
  const { baseUrl, apiKey, apiKeyEnv } = resolved;
  const shownUrl = redactUrl(baseUrl);
  const probe = await probeModels(baseUrl, apiKey);
  if (probe.ok) {
    const keyNote = apiKeyEnv && !apiKey ? `; ${apiKeyEnv} is not set, so no API key was sent` : '';
    return {
      name: label,
      verdict: 'ok',
      message: `${shownUrl} answers${modelCount(probe.models)}${keyNote}`,
    };
  }
  if (probe.status === 401 || probe.status === 403) {
    const hint = apiKeyEnv
      ? apiKey
        ? `check the key in ${apiKeyEnv}`
        : `set ${apiKeyEnv} to the API key`
      : `set ai.providers.${name}.api_key_env to the env variable holding the key`;
    return {
      name: label,
      verdict: 'FAIL',
      message: `${shownUrl} refused the request (${probe.error})`,
      hint,
    };
  }
  if (probe.status === 404) {
    return {
      name: label,
      verdict: 'warn',
      message: `${shownUrl}/models answered ${probe.error}`,
      hint: 'check base_url; OpenAI-compatible URLs usually end in /v1',
    };
  }
  return {
    name: label,
    verdict: 'FAIL',
    message: `${shownUrl} is not reachable: ${probe.error}`,
    hint: 'start the model server or fix base_url',
  };
}
