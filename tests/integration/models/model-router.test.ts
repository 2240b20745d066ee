import net from 'node:net';
import { ConfigError } from '../../../server/common/errors';
import { createLogger } from '../../../server/common/logger';
import { SecretRedactor } from '../../../server/common/secret-redactor';
import { loadConfig } from '../../../server/config';
import {
  MockModelProvider,
  ModelRouter,
  OpenAICompatibleModelProvider,
  type ModelRouterOptions,
} from '../../../server/modules/models';
import { FakeOpenAIServer, FakeReplies } from '../../support/fakes/fake-openai-server';
import { LogCapture } from '../../support/log-capture';

async function unusedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function aiConfig(raw: unknown, env: NodeJS.ProcessEnv = {}) {
  return loadConfig({ raw: { ai: raw }, env, cwd: '/tmp' }).ai;
}

describe('ModelRouter', () => {
  let primary: FakeOpenAIServer;
  let backup: FakeOpenAIServer;
  let noOllama: ModelRouterOptions['probeOllama'];
  const routers: ModelRouter[] = [];
  const build = async (ai: Parameters<typeof ModelRouter.fromConfig>[0], options: ModelRouterOptions = {}): Promise<ModelRouter> => {
    const router = await ModelRouter.fromConfig(ai, { probeOllama: noOllama, env: {}, ...options });
    routers.push(router);
    return router;
  };

  beforeAll(async () => {
    noOllama = { baseUrl: `http://127.0.0.1:${await unusedPort()}/v1`, timeoutMs: 1000 };
  });
  beforeEach(async () => {
    primary = await FakeOpenAIServer.start({ models: ['big-model'] });
    backup = await FakeOpenAIServer.start({ models: ['small-model'] });
  });
  afterEach(async () => {
    await Promise.all(routers.splice(0).map((r) => r.dispose()));
    await primary.close();
    await backup.close();
  });

  const twoProviders = () => ({
    providers: {
      primary: { preset: 'custom', base_url: primary.baseUrl, model: 'big-model', context_window: 32768, max_concurrency: 2 },
      backup: { preset: 'vllm', base_url: backup.baseUrl, model: 'small-model', context_window: 4096 },
    },
  });

  it('routes each role to its provider and model; a null role uses the first provider', async () => {
    const router = await build(
      aiConfig({
        ...twoProviders(),
        roles: {
          main: { provider: 'primary', fallbacks: [{ provider: 'backup' }] },
          summarizer: { provider: 'backup', model: 'tiny-summarizer' },
          embeddings: { provider: 'backup', model: 'embed-1' },
        },
      }),
    );
    expect(router.usingMock).toBe(false);
    expect(router.describe('main')).toBe('primary/big-model');
    expect(router.describe('summarizer')).toBe('backup/tiny-summarizer');
    expect(router.describe('heartbeat')).toBe('primary/big-model');
    expect(router.describe('embeddings')).toBe('backup/embed-1');
    expect(router.routes('main').map((r) => `${r.provider.name}/${r.model}`)).toEqual(['primary/big-model', 'backup/small-model']);
    expect(router.contextWindow('main')).toBe(32768);
    expect(router.contextWindow('summarizer')).toBe(4096);
    // One instance per provider, shared by the roles.
    expect(router.providers().map((p) => p.name).sort()).toEqual(['backup', 'primary']);
    expect(router.primary('main').provider).toBe(router.primary('heartbeat').provider);
    expect(router.findProvider('primary')?.maxConcurrency).toBe(2);
    expect(router.findProvider('nope')).toBeNull();

    await router.chat('summarizer', { messages: [{ role: 'user', content: 'summarize' }] });
    expect(backup.lastChatRequest()!.body!.model).toBe('tiny-summarizer');
    await router.embed(['a', 'b']);
    expect(backup.requests.at(-1)!.body).toMatchObject({ model: 'embed-1', input: ['a', 'b'] });
  });

  it('falls back in order when the primary route fails', async () => {
    const capture = new LogCapture();
    const logger = createLogger({ redactor: new SecretRedactor(), destination: capture, level: 'warn' });
    const router = await build(aiConfig({ ...twoProviders(), roles: { main: { provider: 'primary', fallbacks: [{ provider: 'backup' }] } } }), { logger });
    primary.enqueue(FakeReplies.serverError(503));
    backup.enqueue({ text: 'from the backup' });
    const result = await router.chat('main', { messages: [{ role: 'user', content: 'hi' }] });
    expect(result.text).toBe('from the backup');
    expect(result.route).toEqual({ provider: 'backup', model: 'small-model', fallbackIndex: 1 });
    expect(primary.chatRequests()).toHaveLength(1);
    expect(backup.chatRequests()).toHaveLength(1);
    expect(backup.chatRequests()[0]!.startedAt).toBeGreaterThanOrEqual(primary.chatRequests()[0]!.endedAt!);
    expect(capture.text).toContain('trying the fallback');

    // The primary is tried first again on the next call.
    const next = await router.chat('main', { messages: [{ role: 'user', content: 'again' }] });
    expect(next.route.fallbackIndex).toBe(0);
    expect(next.text).toBe('Echo: again');
  });

  it('an unreachable primary falls back; when every route fails the last error is thrown', async () => {
    const dead = `http://127.0.0.1:${await unusedPort()}/v1`;
    const router = await build(
      aiConfig({
        providers: { dead: { base_url: dead, model: 'x' }, backup: { base_url: backup.baseUrl, model: 'small-model' } },
        roles: { main: { provider: 'dead', fallbacks: [{ provider: 'backup' }] } },
      }),
    );
    await expect(router.chat('main', { messages: [{ role: 'user', content: 'hi' }] })).resolves.toMatchObject({ text: 'Echo: hi' });
    backup.enqueue(FakeReplies.rateLimited(1));
    await expect(router.chat('main', { messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ status: 429, provider: 'backup' });
  });

  it('does not fall back on context-length errors or after text was streamed', async () => {
    const router = await build(aiConfig({ ...twoProviders(), roles: { main: { provider: 'primary', fallbacks: [{ provider: 'backup' }] } } }));
    primary.enqueue(FakeReplies.contextLength());
    await expect(router.chat('main', { messages: [{ role: 'user', content: 'hi' }] })).rejects.toMatchObject({ name: 'ContextLengthError' });
    primary.enqueue({ text: 'half an answer', streamError: { message: 'boom' } });
    const deltas: string[] = [];
    await expect(router.chat('main', { messages: [{ role: 'user', content: 'hi' }] }, { onDelta: (t) => deltas.push(t) })).rejects.toMatchObject({
      name: 'ModelApiError',
    });
    expect(deltas.join('')).toBe('half an answer');
    expect(backup.chatRequests()).toHaveLength(0);
  });

  it('with no provider and no Ollama it uses the mock provider and warns once', async () => {
    const capture = new LogCapture();
    const logger = createLogger({ redactor: new SecretRedactor(), destination: capture });
    const router = await build(aiConfig({}), { logger });
    expect(router.usingMock).toBe(true);
    expect(router.describe('main')).toBe('mock/mock-1');
    expect(router.providers()).toHaveLength(1);
    expect(router.providers()[0]).toBeInstanceOf(MockModelProvider);
    const warnings = capture.entries().filter((e) => e.msg === 'no model provider configured — using the mock provider');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.level).toBe(40);
    const result = await router.chat('main', { messages: [{ role: 'user', content: 'hello' }] });
    expect(result.text).toBe('Mock reply: hello');
    expect(result.usage.estimated).toBe(true);
  });

  it('with no provider but a local Ollama it uses that Ollama and its first model', async () => {
    const ollama = await FakeOpenAIServer.start({ models: ['llama3', 'qwen2.5'] });
    try {
      const router = await build(aiConfig({}), { probeOllama: { baseUrl: ollama.baseUrl } });
      expect(router.usingMock).toBe(false);
      expect(router.describe('main')).toBe('local/llama3');
      expect(router.primary('main').provider.maxConcurrency).toBe(1);
      const result = await router.chat('main', { messages: [{ role: 'user', content: 'hi' }] });
      expect(result).toMatchObject({ text: 'Echo: hi', provider: 'local' });
      expect(ollama.lastChatRequest()!.headers.authorization).toBeUndefined();
    } finally {
      await ollama.close();
    }
  });

  it('probeOllama: false goes straight to the mock', async () => {
    const router = await build(aiConfig({}), { probeOllama: false });
    expect(router.usingMock).toBe(true);
  });

  it('presets fill base URLs and API key variables; config values win', async () => {
    const env = { OPENAI_API_KEY: 'sk-openai-000000000000', OPENROUTER_API_KEY: 'sk-or-111111111111', NVIDIA_API_KEY: 'nvapi-2222222222' };
    const router = await build(
      aiConfig({
        providers: {
          oa: { preset: 'openai', model: 'gpt-4o-mini' },
          or: { preset: 'openrouter', model: 'meta-llama/llama-3.1-8b-instruct' },
          nv: { preset: 'nvidia', model: 'meta/llama-3.1-8b-instruct' },
          ol: { preset: 'ollama', model: 'llama3' },
          vl: { preset: 'vllm', model: 'qwen' },
          lm: { preset: 'lmstudio', model: 'local-model' },
          moved: { preset: 'ollama', base_url: 'http://gpu-box:11434/v1/', model: 'llama3' },
          fake: { preset: 'mock' },
        },
        roles: {
          main: {
            provider: 'oa',
            fallbacks: [{ provider: 'or' }, { provider: 'nv' }, { provider: 'ol' }, { provider: 'vl' }, { provider: 'lm' }, { provider: 'moved' }, { provider: 'fake' }],
          },
        },
      }),
      { env },
    );
    const urls = Object.fromEntries(router.providers().map((p) => [p.name, p instanceof OpenAICompatibleModelProvider ? p.baseUrl : 'mock']));
    expect(urls).toEqual({
      oa: 'https://api.openai.com/v1',
      or: 'https://openrouter.ai/api/v1',
      nv: 'https://integrate.api.nvidia.com/v1',
      ol: 'http://127.0.0.1:11434/v1',
      vl: 'http://127.0.0.1:8000/v1',
      lm: 'http://127.0.0.1:1234/v1',
      moved: 'http://gpu-box:11434/v1',
      fake: 'mock',
    });
    expect(router.routes('main').at(-1)!.model).toBe('mock-1');
  });

  it('a hosted preset without its API key env fails with a config error naming the variable', async () => {
    await expect(build(aiConfig({ providers: { oa: { preset: 'openai', model: 'gpt-4o' } } }))).rejects.toThrow(ConfigError);
    await expect(build(aiConfig({ providers: { oa: { preset: 'openai', model: 'gpt-4o' } } }))).rejects.toThrow(/OPENAI_API_KEY/);
    await expect(build(aiConfig({ providers: { nv: { preset: 'nvidia', api_key_env: 'MY_NV_KEY', model: 'x' } } }))).rejects.toThrow(/MY_NV_KEY/);
    await expect(build(aiConfig({ providers: { c: { preset: 'custom', model: 'x' } } }))).rejects.toThrow(/ai\.providers\.c\.base_url/);
    await expect(build(aiConfig({ providers: { c: { base_url: primary.baseUrl } } }))).rejects.toThrow(/ai\.providers\.c\.model/);
  });

  it('sends the API key from the env variable as Bearer, registers it for redaction and keeps it out of errors', async () => {
    const key = 'sk-router-secret-9876543210';
    const redactor = new SecretRedactor();
    const router = await build(
      aiConfig({ providers: { hosted: { preset: 'openrouter', base_url: primary.baseUrl, model: 'big-model' } } }),
      { env: { OPENROUTER_API_KEY: key }, redactor },
    );
    await router.chat('main', { messages: [{ role: 'user', content: 'hi' }] });
    expect(primary.lastChatRequest()!.headers.authorization).toBe(`Bearer ${key}`);
    expect(redactor.redact(`key=${key}`)).toBe('key=[REDACTED]');
    primary.enqueue({ error: { status: 403, message: `key ${key} is not allowed` } });
    const err = (await router.chat('main', { messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('403');
    expect(err.message).not.toContain(key);
  });

  it('MUNINN_MODEL_BASE_URL (via loadConfig) becomes the main route with MUNINN_MODEL_API_KEY', async () => {
    const env = { MUNINN_MODEL_BASE_URL: primary.baseUrl, MUNINN_MODEL: 'big-model', MUNINN_MODEL_API_KEY: 'env-key-123456' };
    const ai = loadConfig({ raw: {}, env, cwd: '/tmp' }).ai;
    const router = await build(ai, { env });
    expect(router.describe('main')).toBe('env/big-model');
    await router.chat('main', { messages: [{ role: 'user', content: 'hi' }] });
    expect(primary.lastChatRequest()!.headers.authorization).toBe('Bearer env-key-123456');
  });
});
