/**
 * Configuration (issue 2 "Config"): defaults, validation messages that name the key and the fix, the
 * documented environment overrides, config file lookup, and muninn.example.json kept equal to the defaults.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../server/common/errors';
import { defaultConfig, loadConfig, renderConfigExample, type AppConfig } from '../../server/config';

const root = path.resolve(__dirname, '..', '..');
let cwd: string;
beforeEach(() => {
  cwd = mkdtempSync(path.join(os.tmpdir(), 'muninn-config-'));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

/** The ConfigError message for a raw config (and env), failing the test when it loads. */
function errorOf(raw: unknown, env: NodeJS.ProcessEnv = {}): string {
  try {
    loadConfig({ raw, env, cwd });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error(`config loaded although it should not: ${JSON.stringify(raw)}`);
}

const load = (env: NodeJS.ProcessEnv, raw: unknown = {}): AppConfig => loadConfig({ raw, env, cwd });

describe('defaults', () => {
  it('without a file or env every key has its default and data_dir is resolved against the working directory', () => {
    const config = loadConfig({ env: {}, cwd });
    expect(config).toEqual({ ...defaultConfig(), data_dir: path.join(cwd, 'data') });
    expect(config.server.port).toBe(4000);
    expect(config.redis.url).toBeNull();
    expect(config.database.url).toBeNull();
    expect(config.session).toMatchObject({
      queue_mode: 'followup',
      summarizer_mode: 'auto',
      compact_threshold: 0.9,
      retention_days: 30,
    });
    expect(config.default_trust).toBe('MEMBER');
  });
});

describe('validation messages name the key and the fix', () => {
  it('server.port: "x"', () => {
    const message = errorOf({ server: { port: 'x' } });
    expect(message).toContain('config key "server.port"');
    expect(message).toMatch(/Fix: set it to a number/);
  });

  it('server.port: 70000 gives the maximum', () => {
    expect(errorOf({ server: { port: 70000 } })).toMatch(/"server\.port".*Fix: use a number at most 65535/);
  });

  it('session.reset_timezone: an unknown zone says what a valid one looks like', () => {
    expect(errorOf({ session: { reset_timezone: 'Mars/Olympus' } })).toMatch(/"session\.reset_timezone".*IANA time zone.*Europe\/Berlin/);
  });

  it('session.compact_threshold: 0 gives the minimum', () => {
    expect(errorOf({ session: { compact_threshold: 0 } })).toMatch(
      /"session\.compact_threshold".*at least 0\.1/,
    );
  });

  it('an unknown top-level key `sesion` names it and suggests `session`', () => {
    const message = errorOf({ sesion: { queue_mode: 'collect' } });
    expect(message).toContain('config key "sesion"');
    expect(message).toMatch(/unknown key/);
    expect(message).toMatch(/did you mean "session"\?/);
  });

  it('an unknown nested key names its full path and suggests the right one', () => {
    const message = errorOf({ session: { qeue_mode: 'collect' } });
    expect(message).toContain('config key "session.qeue_mode"');
    expect(message).toMatch(/did you mean "queue_mode"\?/);
  });

  it('an unknown key with no close match lists the valid keys there', () => {
    const message = errorOf({ redis: { colour: 'blue' } });
    expect(message).toContain('config key "redis.colour"');
    expect(message).toMatch(/remove it; the keys here are "url", "prefix", "managed_binary", "managed_port"/);
  });

  it('session.queue_mode: "fifo" lists the valid modes', () => {
    const message = errorOf({ session: { queue_mode: 'fifo' } });
    expect(message).toContain('config key "session.queue_mode"');
    expect(message).toMatch(/Fix: use one of "followup", "collect", "interrupt"/);
  });

  it('a wrong type inside a channel names the nested key', () => {
    expect(errorOf({ channels: { telegram: { allow_from: '123' } } })).toMatch(
      /"channels\.telegram\.allow_from".*Fix: set it to an array/,
    );
  });

  it('a provider with an unknown preset lists the presets', () => {
    expect(errorOf({ ai: { providers: { local: { preset: 'ollamma' } } } })).toMatch(
      /"ai\.providers\.local\.preset".*"ollama"/,
    );
  });

  it('a role that points to an undefined provider names the role', () => {
    expect(
      errorOf({
        ai: { providers: { local: { preset: 'ollama' } }, roles: { main: { provider: 'remote' } } },
      }),
    ).toMatch(/"ai\.roles\.main\.provider".*"remote".*local/);
  });

  it('reports every bad key at once, one line each', () => {
    const message = errorOf({ server: { port: 'x', host: 7 }, log: { level: 'loud' }, sesion: {} });
    const lines = message.split('\n').filter((l) => l.startsWith('  - '));
    expect(lines).toHaveLength(4);
    for (const key of ['server.port', 'server.host', 'log.level', 'sesion'])
      expect(message).toContain(`"${key}"`);
  });

  it('the config must be an object', () => {
    expect(errorOf([1, 2])).toMatch(/must be a JSON object/);
  });
});

describe('environment overrides', () => {
  it('PORT sets server.port, also over the file', () => {
    expect(load({ PORT: '5055' }).server.port).toBe(5055);
    expect(load({ PORT: '5055' }, { server: { port: 1234 } }).server.port).toBe(5055);
    expect(load({ PORT: '' }, { server: { port: 1234 } }).server.port).toBe(1234);
  });

  it('PORT that is not a number names the variable', () => {
    expect(errorOf({}, { PORT: 'abc' })).toMatch(/PORT="abc" is not a number\. Fix: .*PORT=4000/);
  });

  it('PORT out of range names the key and the variable', () => {
    expect(errorOf({}, { PORT: '99999' })).toMatch(/"server\.port" \(set by env PORT\).*at most 65535/);
  });

  it('MUNINN_DATA_DIR sets data_dir (relative paths resolved against the working directory)', () => {
    expect(load({ MUNINN_DATA_DIR: '/var/lib/muninn' }).data_dir).toBe('/var/lib/muninn');
    expect(load({ MUNINN_DATA_DIR: 'state' }).data_dir).toBe(path.join(cwd, 'state'));
  });

  it('DATABASE_URL selects PostgreSQL; a non-postgres URL is refused without showing the password', () => {
    expect(load({ DATABASE_URL: 'postgres://u:p@db:5432/muninn' }).database.url).toBe(
      'postgres://u:p@db:5432/muninn',
    );
    const message = errorOf({}, { DATABASE_URL: 'mysql://root:hunter22@db/muninn' });
    expect(message).toMatch(/"database\.url".*not a postgres:\/\/ URL/);
    expect(message).not.toContain('hunter22');
  });

  it('REDIS_URL and MUNINN_REDIS_PREFIX set the redis keys', () => {
    expect(load({ REDIS_URL: 'redis://cache:6379/2', MUNINN_REDIS_PREFIX: 'prod' }).redis).toMatchObject({
      url: 'redis://cache:6379/2',
      prefix: 'prod',
    });
  });

  it('LOG_LEVEL sets log.level; a bad one names the variable and lists the levels', () => {
    expect(load({ LOG_LEVEL: 'debug' }).log.level).toBe('debug');
    expect(errorOf({}, { LOG_LEVEL: 'loud' })).toMatch(/"log\.level" \(set by env LOG_LEVEL\).*"debug"/);
  });

  it('MUNINN_MODEL_BASE_URL, MUNINN_MODEL and MUNINN_MODEL_CONTEXT_WINDOW define the main model provider', () => {
    const config = load({
      MUNINN_MODEL_BASE_URL: 'http://127.0.0.1:11434/v1',
      MUNINN_MODEL: 'qwen3:8b',
      MUNINN_MODEL_CONTEXT_WINDOW: '32768',
    });
    expect(config.ai.providers.env).toMatchObject({
      base_url: 'http://127.0.0.1:11434/v1',
      api_key_env: 'MUNINN_MODEL_API_KEY',
      model: 'qwen3:8b',
      context_window: 32768,
    });
    expect(config.ai.roles.main).toEqual({ provider: 'env', model: 'qwen3:8b', fallbacks: [] });
  });

  it('MUNINN_MODEL_CONTEXT_WINDOW that is not a number names the variable', () => {
    expect(errorOf({}, { MUNINN_MODEL_BASE_URL: 'http://x/v1', MUNINN_MODEL_CONTEXT_WINDOW: 'big' })).toMatch(
      /MUNINN_MODEL_CONTEXT_WINDOW="big"/,
    );
  });

  it('TELEGRAM_BOT_TOKEN enables Telegram; TELEGRAM_API_ROOT points it to a self-hosted Bot API', () => {
    const config = load({ TELEGRAM_BOT_TOKEN: '123456:ABCDEF', TELEGRAM_API_ROOT: 'http://127.0.0.1:8081' });
    expect(config.channels.telegram).toMatchObject({
      bot_token: '123456:ABCDEF',
      enabled: true,
      api_root: 'http://127.0.0.1:8081',
    });
    expect(load({}).channels.telegram).toMatchObject({
      bot_token: null,
      enabled: false,
      api_root: 'https://api.telegram.org',
    });
  });

  it('WHATSAPP_ENABLED turns WhatsApp on or off', () => {
    expect(load({ WHATSAPP_ENABLED: 'true' }).channels.whatsapp.enabled).toBe(true);
    expect(
      load({ WHATSAPP_ENABLED: '0' }, { channels: { whatsapp: { enabled: true } } }).channels.whatsapp
        .enabled,
    ).toBe(false);
  });
});

describe('config file', () => {
  it('reads muninn.json from the working directory', () => {
    writeFileSync(
      path.join(cwd, 'muninn.json'),
      JSON.stringify({ server: { port: 4100 }, session: { queue_mode: 'collect' } }),
    );
    const config = loadConfig({ env: {}, cwd });
    expect(config.server.port).toBe(4100);
    expect(config.session.queue_mode).toBe('collect');
    expect(config.session.summarizer_mode).toBe('auto');
  });

  it('MUNINN_CONFIG points to another file; its errors name that file', () => {
    writeFileSync(path.join(cwd, 'other.json'), JSON.stringify({ session: { queue_mode: 'fifo' } }));
    expect(() => loadConfig({ env: { MUNINN_CONFIG: 'other.json' }, cwd })).toThrow(
      new RegExp(
        `Invalid configuration in ${path.join(cwd, 'other.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`,
      ),
    );
  });

  it('MUNINN_CONFIG to a missing file is an error that says what to do', () => {
    expect(() => loadConfig({ env: { MUNINN_CONFIG: 'missing.json' }, cwd })).toThrow(
      /does not exist\. Fix: create it or unset MUNINN_CONFIG/,
    );
  });

  it('a file that is not JSON names the file', () => {
    writeFileSync(path.join(cwd, 'muninn.json'), '{ "server": { port: 1 } ');
    expect(() => loadConfig({ env: {}, cwd })).toThrow(
      /Cannot read config file .*muninn\.json.*Fix: make it valid JSON/,
    );
  });
});

describe('muninn.example.json', () => {
  const committed = () => readFileSync(path.join(root, 'muninn.example.json'), 'utf8');

  it('equals the defaults (run `npm run config:example` after changing the config schema)', () => {
    expect(committed()).toBe(renderConfigExample());
  });

  it('is a valid config file that changes nothing', () => {
    writeFileSync(path.join(cwd, 'muninn.json'), committed());
    expect(loadConfig({ env: {}, cwd })).toEqual(loadConfig({ raw: {}, env: {}, cwd }));
  });

  it('shows every key of every section', () => {
    const example = JSON.parse(committed()) as Record<string, Record<string, unknown>>;
    for (const key of [
      'server',
      'graphql',
      'database',
      'redis',
      'log',
      'ai',
      'session',
      'memory',
      'tools',
      'channels',
      'default_trust',
      'data_dir',
    ]) {
      expect(example).toHaveProperty(key);
    }
    expect(Object.keys(example.session!)).toEqual(
      expect.arrayContaining([
        'queue_mode',
        'summarizer_mode',
        'compact_threshold',
        'dm_scope',
        'daily_reset_hour',
        'idle_minutes',
        'retention_days',
      ]),
    );
    expect(example.channels).toHaveProperty('telegram.bot_token', null);
  });
});
