import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig, type AppConfig } from '../../server/config';

export function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const prev = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && prev && typeof prev === 'object' && !Array.isArray(prev)
        ? deepMerge(prev as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

/** Raw config for a hermetic test server: temp data folder, port 0, shared test Redis, unique prefix. */
export function testConfig(dataDir: string, extra: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): AppConfig {
  const base = {
    data_dir: dataDir,
    server: { port: 0, host: '127.0.0.1' },
    redis: { url: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: `t${randomUUID().slice(0, 8)}` },
    log: { level: 'info' },
    // The repository's example skills stay out of other tests' prompts; skill tests write their own.
    skills: { dir: path.join(dataDir, 'skills') },
  };
  return loadConfig({ raw: deepMerge(base, extra), env });
}
