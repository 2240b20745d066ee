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

/**
 * Applies the documented environment overrides (DESIGN §8) on top of the file config. Returns which config
 * key each variable set, so validation messages can point at the variable.
 */
function applyEnv(raw: Json, env: NodeJS.ProcessEnv): Map<string, string> {
  const fromEnv = new Map<string, string>();
  const set = (keyPath: string, value: unknown, name: string) => {
    setPath(raw, keyPath, value);
    fromEnv.set(keyPath, name);
  };
  const port = envNumber(env, 'PORT');
  if (port !== undefined) set('server.port', port, 'PORT');
  if (env.MUNINN_DATA_DIR) set('data_dir', env.MUNINN_DATA_DIR, 'MUNINN_DATA_DIR');
  if (env.DATABASE_URL) set('database.url', env.DATABASE_URL, 'DATABASE_URL');
  if (env.REDIS_URL) set('redis.url', env.REDIS_URL, 'REDIS_URL');
  if (env.MUNINN_REDIS_PREFIX) set('redis.prefix', env.MUNINN_REDIS_PREFIX, 'MUNINN_REDIS_PREFIX');
  if (env.MUNINN_METRICS_TOKEN) set('metrics.token', env.MUNINN_METRICS_TOKEN, 'MUNINN_METRICS_TOKEN');
  if (env.LOG_LEVEL) set('log.level', env.LOG_LEVEL, 'LOG_LEVEL');
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
    fromEnv.set('ai.providers.env.base_url', 'MUNINN_MODEL_BASE_URL');
    fromEnv.set('ai.providers.env.context_window', 'MUNINN_MODEL_CONTEXT_WINDOW');
  }
  if (env.TELEGRAM_BOT_TOKEN) {
    set('channels.telegram.bot_token', env.TELEGRAM_BOT_TOKEN, 'TELEGRAM_BOT_TOKEN');
    setPath(raw, 'channels.telegram.enabled', true);
  }
  if (env.TELEGRAM_API_ROOT) set('channels.telegram.api_root', env.TELEGRAM_API_ROOT, 'TELEGRAM_API_ROOT');
  if (env.WHATSAPP_ENABLED) set('channels.whatsapp.enabled', /^(1|true|yes|on)$/i.test(env.WHATSAPP_ENABLED), 'WHATSAPP_ENABLED');
  return fromEnv;
}

/** The part of a zod schema's internals this file reads to list the keys valid at a path. */
interface SchemaNode {
  _zod: { def: { type: string; innerType?: SchemaNode; shape?: Record<string, SchemaNode>; valueType?: SchemaNode; element?: SchemaNode } };
}

function unwrap(node: SchemaNode | undefined): SchemaNode | undefined {
  let current = node;
  while (current?._zod.def.innerType) current = current._zod.def.innerType;
  return current;
}

/** The keys the schema allows in the object at `keyPath` (empty when that is not a fixed object). */
function knownKeysAt(keyPath: PropertyKey[]): string[] {
  let node = unwrap(appConfigSchema as unknown as SchemaNode);
  for (const segment of keyPath) {
    const def: SchemaNode['_zod']['def'] | undefined = node?._zod.def;
    if (def?.type === 'object') node = unwrap(def.shape?.[String(segment)]);
    else if (def?.type === 'record') node = unwrap(def.valueType);
    else if (def?.type === 'array') node = unwrap(def.element);
    else return [];
  }
  const def = node?._zod.def;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The known key closest to a misspelt one, when it is close enough to be a likely typo. */
function closestKey(key: string, known: string[]): string | null {
  let best: { key: string; distance: number } | null = null;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(key.length / 3)) ? best.key : null;
}

/** Turns zod issues into one message per key, each saying what is wrong and how to fix it. */
export function formatConfigIssues(source: string, error: z.ZodError, fromEnv: ReadonlyMap<string, string> = new Map()): string {
  const line = (keyPath: string, problem: string, fix: string) => {
    const env = fromEnv.get(keyPath);
    return `  - config key "${keyPath || '(root)'}"${env ? ` (set by env ${env})` : ''}: ${problem}. Fix: ${fix}.`;
  };
  const lines = error.issues.flatMap((issue) => {
    const key = issue.path.join('.');
    if (issue.code === 'unrecognized_keys') {
      const known = knownKeysAt(issue.path);
      return issue.keys.map((unknown) => {
        const suggestion = closestKey(unknown, known);
        const fix = suggestion
          ? `did you mean "${suggestion}"? Rename it`
          : `remove it${known.length ? `; the keys here are ${known.map((k) => `"${k}"`).join(', ')}` : ''}`;
        return line(key ? `${key}.${unknown}` : unknown, 'unknown key', `${fix} (see muninn.example.json)`);
      });
    }
    let fix = 'see muninn.example.json for the expected shape';
    if (issue.code === 'invalid_value' && 'values' in issue) {
      fix = `use one of ${(issue.values as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (issue.code === 'invalid_type') {
      fix = `set it to ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    } else if (issue.code === 'too_big' || issue.code === 'too_small') {
      const big = issue.code === 'too_big';
      const limit = String(big ? issue.maximum : issue.minimum);
      const bound = issue.inclusive === false ? (big ? 'below' : 'above') : big ? 'at most' : 'at least';
      const unit = issue.origin === 'string' ? ' characters' : issue.origin === 'array' ? ' entries' : '';
      fix = issue.origin === 'string' || issue.origin === 'array' ? `use ${bound} ${limit}${unit}` : `use a number ${bound} ${limit}`;
    }
    return [line(key, issue.message, fix)];
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
  const fromEnv = applyEnv(raw, env);
  const parsed = appConfigSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(formatConfigIssues(source, parsed.error, fromEnv));
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
  const { budgets } = config;
  if (budgets.on_exceed === 'downgrade' && !budgets.downgrade_to) {
    throw new ConfigError('config key "budgets.downgrade_to" is not set, but budgets.on_exceed is "downgrade". Fix: set it to a cheaper role ("summarizer") or route ({ "provider": "local", "model": "llama3.1:8b" }), or set budgets.on_exceed to "block".');
  }
  const downgrade = budgets.downgrade_to;
  if (downgrade && typeof downgrade === 'object') {
    for (const r of [downgrade, ...downgrade.fallbacks]) {
      if (!names.includes(r.provider)) {
        throw new ConfigError(`config key "budgets.downgrade_to.provider": provider "${r.provider}" is not defined. Fix: add it under ai.providers or use one of: ${names.join(', ') || '(none defined)'}.`);
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
