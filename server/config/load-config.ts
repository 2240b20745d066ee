import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../common/errors';
import { appConfigSchema, type AppConfig } from './app-config.schema';

export interface LoadConfigOptions {
  /** Environment to read overrides from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Working directory that relative paths are resolved against. @default process.cwd() */
  cwd?: string;
  /** Raw config object to use instead of reading a file (tests). */
  raw?: unknown;
}

type Json = Record<string, unknown>;

function setPath(target: Json, keyPath: string, value: unknown): void {
  const keys = keyPath.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Json;
  }
  node[keys[keys.length - 1]!] = value;
}

function envNumber(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ConfigError(`Environment variable ${name}="${value}" is not a number. Fix: set it to a number, e.g. ${name}=4000.`);
  return n;
}

/** Applies the documented environment overrides (DESIGN §8) on top of the file config. */
function applyEnv(raw: Json, env: NodeJS.ProcessEnv): void {
  const port = envNumber(env, 'PORT');
  if (port !== undefined) setPath(raw, 'server.port', port);
  if (env.MUNINN_DATA_DIR) setPath(raw, 'data_dir', env.MUNINN_DATA_DIR);
  if (env.DATABASE_URL) setPath(raw, 'database.url', env.DATABASE_URL);
  if (env.REDIS_URL) setPath(raw, 'redis.url', env.REDIS_URL);
  if (env.MUNINN_REDIS_PREFIX) setPath(raw, 'redis.prefix', env.MUNINN_REDIS_PREFIX);
  if (env.LOG_LEVEL) setPath(raw, 'log.level', env.LOG_LEVEL);
  if (env.MUNINN_MODEL_BASE_URL) {
    const providers = ((raw.ai as Json | undefined)?.providers as Json | undefined) ?? {};
    const existing = (providers.env as Json | undefined) ?? {};
    setPath(raw, 'ai.providers.env', {
      preset: 'custom',
      ...existing,
      base_url: env.MUNINN_MODEL_BASE_URL,
      api_key_env: 'MUNINN_MODEL_API_KEY',
      ...(env.MUNINN_MODEL ? { model: env.MUNINN_MODEL } : {}),
      ...(envNumber(env, 'MUNINN_MODEL_CONTEXT_WINDOW') !== undefined
        ? { context_window: envNumber(env, 'MUNINN_MODEL_CONTEXT_WINDOW') }
        : {}),
    });
    setPath(raw, 'ai.roles.main', { provider: 'env', model: env.MUNINN_MODEL ?? null, fallbacks: [] });
  }
  if (env.TELEGRAM_BOT_TOKEN) {
    setPath(raw, 'channels.telegram.bot_token', env.TELEGRAM_BOT_TOKEN);
    setPath(raw, 'channels.telegram.enabled', true);
  }
  if (env.TELEGRAM_API_ROOT) setPath(raw, 'channels.telegram.api_root', env.TELEGRAM_API_ROOT);
  if (env.WHATSAPP_ENABLED) setPath(raw, 'channels.whatsapp.enabled', /^(1|true|yes|on)$/i.test(env.WHATSAPP_ENABLED));
}

/** Turns zod issues into one message per key, each saying what is wrong and how to fix it. */
export function formatConfigIssues(source: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const key = issue.path.join('.') || '(root)';
    let fix = 'see muninn.example.json for the expected shape';
    if (issue.code === 'unrecognized_keys') {
      fix = `remove or rename ${issue.keys.map((k) => `"${k}"`).join(', ')} (check the spelling against muninn.example.json)`;
    } else if (issue.code === 'invalid_value' && 'values' in issue) {
      fix = `use one of ${(issue.values as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (issue.code === 'invalid_type') {
      fix = `set it to a ${issue.expected}`;
    } else if (issue.code === 'too_small' || issue.code === 'too_big') {
      fix = issue.message.toLowerCase();
    }
    return `  - config key "${key}": ${issue.message}. Fix: ${fix}.`;
  });
  return `Invalid configuration in ${source}:\n${lines.join('\n')}`;
}

/** Path of the config file: MUNINN_CONFIG, else ./muninn.json (optional). */
export function configFilePath(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  return path.resolve(cwd, env.MUNINN_CONFIG ?? 'muninn.json');
}

/**
 * Loads, merges and validates the configuration: file (optional) → env overrides → defaults. Throws a
 * ConfigError naming every bad key and its fix.
 */
export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  let raw: Json = {};
  let source = 'defaults';
  if (options.raw !== undefined) {
    raw = structuredClone(options.raw) as Json;
    source = 'the given config';
  } else {
    const file = configFilePath(env, cwd);
    if (existsSync(file)) {
      source = file;
      try {
        raw = JSON.parse(readFileSync(file, 'utf8')) as Json;
      } catch (err) {
        throw new ConfigError(`Cannot read config file ${file}: ${(err as Error).message}. Fix: make it valid JSON (see muninn.example.json).`);
      }
    } else if (env.MUNINN_CONFIG) {
      throw new ConfigError(`MUNINN_CONFIG points to ${file}, which does not exist. Fix: create it or unset MUNINN_CONFIG.`);
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`Config in ${source} must be a JSON object. Fix: wrap the keys in { }.`);
  }
  applyEnv(raw, env);
  const parsed = appConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatConfigIssues(source, parsed.error));
  const config = parsed.data;
  config.data_dir = path.resolve(cwd, config.data_dir);
  validateCrossKeys(config);
  return config;
}

function validateCrossKeys(config: AppConfig): void {
  const names = Object.keys(config.ai.providers);
  for (const [role, route] of Object.entries(config.ai.roles)) {
    if (!route) continue;
    for (const r of [route, ...route.fallbacks]) {
      if (!names.includes(r.provider)) {
        throw new ConfigError(
          `config key "ai.roles.${role}.provider": provider "${r.provider}" is not defined. Fix: add it under ai.providers or use one of: ${names.join(', ') || '(none defined)'}.`,
        );
      }
    }
  }
  if (config.database.url && !/^postgres(ql)?:\/\//.test(config.database.url)) {
    throw new ConfigError(`config key "database.url": "${config.database.url.replace(/:[^:@/]*@/, ':***@')}" is not a postgres:// URL. Fix: use postgres://user:pass@host:5432/db, or remove it to use SQLite.`);
  }
}

/** The defaults, as written to muninn.example.json. */
export function defaultConfig(): AppConfig {
  return appConfigSchema.parse({});
}
