import { ConfigError } from '../../../server/common/errors';
import { appConfigSchema } from '../../../server/config';
import { MODEL_PRESETS, redactUrl, resolveProviderConfig } from '../../../server/modules/models';

const provider = (raw: Record<string, unknown>) => appConfigSchema.parse({ ai: { providers: { p: raw } } }).ai.providers.p!;

describe('resolveProviderConfig', () => {
  it('fills base URL and key variable from the preset', () => {
    const resolved = resolveProviderConfig('p', provider({ preset: 'openrouter', model: 'x' }), { OPENROUTER_API_KEY: 'sk-or-abc' });
    expect(resolved).toMatchObject({ kind: 'openai-compatible', baseUrl: 'https://openrouter.ai/api/v1', apiKey: 'sk-or-abc', apiKeyEnv: 'OPENROUTER_API_KEY', model: 'x' });
  });

  it('lets config values win and trims trailing slashes', () => {
    const resolved = resolveProviderConfig('p', provider({ preset: 'openai', base_url: 'https://proxy.example/v1/', api_key_env: 'PROXY_KEY', model: 'gpt' }), {
      PROXY_KEY: 'k-123',
    });
    expect(resolved).toMatchObject({ baseUrl: 'https://proxy.example/v1', apiKey: 'k-123', apiKeyEnv: 'PROXY_KEY', maxTokensParam: 'max_completion_tokens' });
  });

  it('local presets need no key, and an unset optional key means none', () => {
    for (const preset of ['ollama', 'vllm', 'lmstudio'] as const) {
      const resolved = resolveProviderConfig('p', provider({ preset, model: 'm' }), {});
      expect(resolved).toMatchObject({ kind: 'openai-compatible', apiKey: null, baseUrl: MODEL_PRESETS[preset].baseUrl });
    }
    expect(resolveProviderConfig('p', provider({ preset: 'custom', base_url: 'http://h/v1', api_key_env: 'UNSET' }), {})).toMatchObject({ apiKey: null });
  });

  it('names the missing env variable and the fix', () => {
    for (const [preset, variable] of [
      ['openai', 'OPENAI_API_KEY'],
      ['openrouter', 'OPENROUTER_API_KEY'],
      ['nvidia', 'NVIDIA_API_KEY'],
    ] as const) {
      const attempt = () => resolveProviderConfig('hosted', provider({ preset, model: 'm' }), { [variable]: '  ' });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(new RegExp(`ai\\.providers\\.hosted.*${variable} is not set.*Fix: export ${variable}=`));
    }
  });

  it('requires a base URL for custom and rejects non-URLs', () => {
    expect(() => resolveProviderConfig('c', provider({ preset: 'custom' }), {})).toThrow(/ai\.providers\.c\.base_url" is required/);
    expect(() => resolveProviderConfig('c', provider({ base_url: 'not a url' }), {})).toThrow(/is not a URL/);
  });

  it('mock needs nothing and has a default model', () => {
    expect(resolveProviderConfig('m', provider({ preset: 'mock' }), {})).toMatchObject({ kind: 'mock', model: 'mock-1', name: 'm' });
  });

  it('copies limits and capabilities from config', () => {
    const resolved = resolveProviderConfig('p', provider({ preset: 'ollama', model: 'm', context_window: 32768, max_concurrency: 3, timeout_ms: 5000, supports_tools: false, supports_vision: true }), {});
    expect(resolved).toMatchObject({ contextWindow: 32768, maxConcurrency: 3, timeoutMs: 5000, supportsTools: false, supportsVision: true });
  });
});

describe('redactUrl', () => {
  it('hides credentials in URLs', () => {
    expect(redactUrl('https://user:pa55@host.example/v1')).toBe('https://***@host.example/v1');
    expect(redactUrl('http://127.0.0.1:11434/v1')).toBe('http://127.0.0.1:11434/v1');
  });
});
