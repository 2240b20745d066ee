import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { freePort } from '../../../server/redis/managed-redis';
import { everythingServer } from '../../support/mcp/everything';
import { runCli, tempDir, type CliResult } from './run-cli';

const CHECK_LINE = /^(\S+(?: \S+)*)\s+(ok|warn|FAIL): (.+)$/;
const CHECKS = ['config', 'data folder', 'database', 'redis', 'model provider', 'pricing', 'telegram', 'voice', 'ffmpeg', 'mcp'];

/** The check lines of a doctor run, by name. */
function checks(res: CliResult): Map<string, { verdict: string; text: string }> {
  const out = new Map<string, { verdict: string; text: string }>();
  for (const line of res.stdout.split('\n')) {
    const m = CHECK_LINE.exec(line);
    if (m) out.set(m[1]!, { verdict: m[2]!, text: m[3]! });
  }
  return out;
}

describe('muninn doctor', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    dir = tempDir();
    env = { MUNINN_DATA_DIR: dir, REDIS_URL: process.env.TEST_REDIS_URL };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes a muninn.json into the run's cwd (the data folder doubles as cwd). */
  const writeConfig = (config: unknown) =>
    writeFileSync(path.join(dir, 'muninn.json'), JSON.stringify(config));

  it('passes with a good config and a reachable Redis: one line per check, exit 0, nothing created', async () => {
    const res = await runCli(['doctor'], { env });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const found = checks(res);
    expect([...found.keys()]).toEqual(CHECKS);
    expect(found.get('config')).toEqual({
      verdict: 'ok',
      text: expect.stringContaining('using defaults and environment'),
    });
    expect(found.get('data folder')).toEqual({ verdict: 'ok', text: `${dir} is writable` });
    expect(found.get('database')!.verdict).toBe('warn');
    expect(found.get('database')!.text).toContain('no database yet');
    expect(found.get('redis')).toEqual({ verdict: 'ok', text: expect.stringMatching(/answers PING$/) });
    // Hermetic either way: a developer machine may run Ollama.
    expect(['ok', 'warn']).toContain(found.get('model provider')!.verdict);
    if (found.get('model provider')!.verdict === 'warn') {
      expect(found.get('model provider')!.text).toMatch(
        /^no model provider configured; the mock provider will answer — hint: /,
      );
    }
    expect(found.get('telegram')).toEqual({ verdict: 'ok', text: 'channel disabled' });
    expect(found.get('voice')).toEqual({ verdict: 'ok', text: expect.stringMatching(/^off \(no ai\.roles\.transcribe or ai\.roles\.speech\)/) });
    // Without spoken replies ffmpeg is not needed: ok whether it is installed or not.
    expect(found.get('ffmpeg')!.verdict).toBe('ok');
    expect(res.stdout).toMatch(/\n0 failed, \d warnings?\.\n$/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('reports a migrated database as ok', async () => {
    expect((await runCli(['migrate'], { env })).code).toBe(0);
    const res = await runCli(['doctor'], { env });
    expect(checks(res).get('database')).toEqual({
      verdict: 'ok',
      text: expect.stringMatching(/muninn\.sqlite opens; all \d+ migrations applied$/),
    });
  });

  it('warns about pending migrations and fails on a file that is not a database', async () => {
    const dbFile = path.join(dir, 'muninn.sqlite');
    writeFileSync(dbFile, ''); // an empty file is an empty SQLite database without any migration
    const pending = await runCli(['doctor'], { env });
    expect(pending.code).toBe(0);
    expect(checks(pending).get('database')).toEqual({
      verdict: 'warn',
      text: `${dbFile} opens but has pending migrations — hint: run "muninn migrate" ("muninn serve" also applies them at start)`,
    });

    writeFileSync(dbFile, 'this is not a database, just text that is long enough to fill a page header');
    const broken = await runCli(['doctor'], { env });
    expect(broken.code).toBe(1);
    expect(checks(broken).get('database')!.verdict).toBe('FAIL');
    expect(checks(broken).get('database')!.text).toContain(`cannot use ${dbFile}: file is not a database`);
  });

  it('fails with exit 1 on a config file that is not JSON, printing its message', async () => {
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{ "server": { "port": 4000, }');
    const res = await runCli(['doctor'], { env: { ...env, MUNINN_CONFIG: bad } });
    expect(res.code).toBe(1);
    const found = checks(res);
    expect(found.get('config')!.verdict).toBe('FAIL');
    expect(found.get('config')!.text).toContain(`Cannot read config file ${bad}`);
    expect(res.stdout).toContain('1 failed, 0 warnings; the other checks need a valid configuration.');
  });

  it('prints every bad key of an invalid config under the FAIL line', async () => {
    writeConfig({ server: { prot: 4000 }, log: { level: 'loud' } });
    const res = await runCli(['doctor'], { env, cwd: dir });
    expect(res.code).toBe(1);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toMatch(/^config\s+FAIL: Invalid configuration in .*muninn\.json:$/);
    expect(lines.slice(1, 3).join('\n')).toMatch(/^\s+- config key "server.*prot/m);
    expect(lines.slice(1, 3).join('\n')).toMatch(/^\s+- config key "log\.level": .*Fix: use one of/m);
  });

  it('fails with exit 1 when REDIS_URL does not answer, and still runs the other checks', async () => {
    const res = await runCli(['doctor'], { env: { ...env, REDIS_URL: 'redis://127.0.0.1:1' } });
    expect(res.code).toBe(1);
    const found = checks(res);
    expect([...found.keys()]).toEqual(CHECKS);
    expect(found.get('redis')!.verdict).toBe('FAIL');
    expect(found.get('redis')!.text).toMatch(
      /^redis:\/\/127\.0\.0\.1:1 does not answer: .*ECONNREFUSED.* — hint: start that Redis or fix REDIS_URL/,
    );
  });

  it('without REDIS_URL starts the managed redis-server once and stops it again', async () => {
    // A stand-in redis-server that answers PING, so the test does not depend on Redis being installed.
    const fake = path.join(dir, 'fake-redis-server');
    writeFileSync(
      fake,
      `#!/usr/bin/env node
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
require('node:fs').appendFileSync(${JSON.stringify(path.join(dir, 'fake-redis.log'))}, 'started\\n');
require('node:net').createServer((s) => s.on('data', () => s.write('+PONG\\r\\n'))).listen(port, '127.0.0.1');
process.on('SIGTERM', () => { require('node:fs').appendFileSync(${JSON.stringify(path.join(dir, 'fake-redis.log'))}, 'stopped\\n'); process.exit(0); });
`,
    );
    chmodSync(fake, 0o755);
    writeConfig({ redis: { managed_binary: fake } });
    const res = await runCli(['doctor'], { env: { MUNINN_DATA_DIR: dir }, cwd: dir });
    expect(checks(res).get('redis')).toEqual({
      verdict: 'ok',
      text: `REDIS_URL is not set; a managed "${fake}" starts and answers PING`,
    });
    expect(res.code).toBe(0);
    expect(readFileSync(path.join(dir, 'fake-redis.log'), 'utf8')).toBe('started\nstopped\n');
    expect(existsSync(path.join(dir, 'redis'))).toBe(false);
  });

  it('fails with the install hint when the managed redis-server is missing', async () => {
    writeConfig({ redis: { managed_binary: path.join(dir, 'no-such-redis-server') } });
    const res = await runCli(['doctor'], { env: { MUNINN_DATA_DIR: dir }, cwd: dir });
    expect(res.code).toBe(1);
    const redis = checks(res).get('redis')!;
    expect(redis.verdict).toBe('FAIL');
    expect(redis.text).toContain(
      `REDIS_URL is not set and "${path.join(dir, 'no-such-redis-server')}" was not found`,
    );
    expect(redis.text).toContain('hint: Install Redis');
  });

  describe('model providers', () => {
    let server: http.Server;
    let baseUrl: string;
    const seen: Array<string | undefined> = [];
    beforeAll(async () => {
      server = http.createServer((req, res) => {
        seen.push(req.headers.authorization);
        if (req.url === '/slow/v1/models') return; // never answers
        if (req.url !== '/v1/models') return void res.writeHead(404).end();
        if (req.headers.authorization !== 'Bearer sk-test-key') {
          return void res.writeHead(401).end('{"error":"bad key"}');
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"a"},{"id":"b"}]}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('checks each provider with its API key and a 3 s timeout: ok, refused key, wrong path, unreachable, silent', async () => {
      writeConfig({
        ai: {
          providers: {
            good: { base_url: baseUrl, api_key_env: 'GOOD_KEY' },
            badkey: { base_url: `${baseUrl}/`, api_key_env: 'BAD_KEY' },
            nopath: { base_url: baseUrl.replace('/v1', '/v2') },
            down: { base_url: `http://127.0.0.1:${await freePort()}/v1` },
            slow: { base_url: baseUrl.replace('/v1', '/slow/v1') },
            fake: { preset: 'mock' },
            nourl: { preset: 'custom' },
            hosted: { preset: 'openrouter' },
          },
        },
      });
      const res = await runCli(['doctor'], {
        env: { ...env, GOOD_KEY: 'sk-test-key', BAD_KEY: 'sk-wrong' },
        cwd: dir,
      });
      expect(res.code).toBe(1);
      const found = checks(res);
      expect(found.get('provider good')).toEqual({ verdict: 'ok', text: `${baseUrl} answers (2 models)` });
      expect(found.get('provider badkey')).toEqual({
        verdict: 'FAIL',
        text: `${baseUrl} refused the request (HTTP 401) — hint: check the key in BAD_KEY`,
      });
      expect(found.get('provider nopath')!.verdict).toBe('warn');
      expect(found.get('provider down')!.verdict).toBe('FAIL');
      expect(found.get('provider down')!.text).toMatch(/is not reachable: fetch failed \(ECONNREFUSED\)/);
      expect(found.get('provider slow')!.text).toMatch(/is not reachable: timed out/);
      expect(found.get('provider fake')!.verdict).toBe('ok');
      // Presets are resolved as the model router does: a missing base_url or required key fails.
      expect(found.get('provider nourl')).toEqual({
        verdict: 'FAIL',
        text: expect.stringContaining('"ai.providers.nourl.base_url" is required'),
      });
      expect(found.get('provider hosted')).toEqual({
        verdict: 'FAIL',
        text: expect.stringContaining('OPENROUTER_API_KEY is not set'),
      });
      expect(seen).toEqual(expect.arrayContaining(['Bearer sk-test-key', 'Bearer sk-wrong', undefined]));
      expect(res.stdout).not.toContain('sk-test-key');
    });

    it('flags models without a price (their calls count tokens only), and passes once every model has one', async () => {
      const providers = { good: { base_url: baseUrl, model: 'big-1' }, mini: { base_url: baseUrl, model: 'mini-1' } };
      const roles = { summarizer: { provider: 'mini', model: null, fallbacks: [] } };
      writeConfig({ ai: { providers, roles }, pricing: { 'big-1': { input_per_mtok: 3, output_per_mtok: 15 } }, budgets: { defaults: { MEMBER: { daily_usd: 1 } } } });
      const missing = await runCli(['doctor'], { env, cwd: dir });
      expect(checks(missing).get('pricing')).toEqual({
        verdict: 'warn',
        text: expect.stringContaining('1 model has no price: their calls count tokens only and cost nothing against budgets — hint: add pricing.'),
      });
      expect(missing.stdout).toMatch(/^\s+mini\/mini-1 \(ai\.roles\.summarizer\)$/m);

      writeConfig({ ai: { providers, roles }, pricing: { 'big-1': { input_per_mtok: 3, output_per_mtok: 15 }, 'mini/mini-1': { input_per_mtok: 0.1, output_per_mtok: 0.4 } } });
      const priced = await runCli(['doctor'], { env, cwd: dir });
      expect(checks(priced).get('pricing')).toEqual({ verdict: 'ok', text: 'every configured model has a price (2)' });
    });
  });

  it('fails when Telegram is enabled without a bot token, and passes with one', async () => {
    writeConfig({ channels: { telegram: { enabled: true } } });
    const without = await runCli(['doctor'], { env, cwd: dir });
    expect(without.code).toBe(1);
    expect(checks(without).get('telegram')).toEqual({
      verdict: 'FAIL',
      text: expect.stringContaining('enabled but has no bot token — hint: set TELEGRAM_BOT_TOKEN'),
    });

    const withToken = await runCli(['doctor'], {
      env: { ...env, TELEGRAM_BOT_TOKEN: '123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ_abc' },
      cwd: dir,
    });
    expect(checks(withToken).get('telegram')).toEqual({
      verdict: 'ok',
      text: 'channel enabled; bot token present',
    });
  });

  describe('voice', () => {
    /** Both voice roles on one provider (the provider check itself is not what these tests look at). */
    const voiceConfig = (voice: Record<string, unknown>, roles: Record<string, unknown> = {}) =>
      writeConfig({
        ai: {
          providers: { speech: { base_url: 'http://127.0.0.1:9/v1' } },
          roles: { transcribe: { provider: 'speech', model: 'whisper-1' }, speech: { provider: 'speech', model: 'tts-1' }, ...roles },
        },
        voice,
      });

    it('reports the roles and the installed ffmpeg with its version', async () => {
      voiceConfig({ speech_format: 'mp3' });
      const found = checks(await runCli(['doctor'], { env, cwd: dir }));
      expect(found.get('voice')).toEqual({
        verdict: 'ok',
        text: 'voice notes transcribed by speech/whisper-1 (up to 300 s); spoken replies (when_voice) by speech/tts-1 as mp3',
      });
      // The real ffmpeg (tests generate their audio with it).
      expect(found.get('ffmpeg')).toEqual({ verdict: 'ok', text: expect.stringMatching(/^ffmpeg version \S+ .*\(voice\.ffmpeg = "ffmpeg"\)$/) });
    });

    it('runs the ffmpeg voice.ffmpeg names, and warns when it is missing while speech needs converting', async () => {
      const fake = path.join(dir, 'my-ffmpeg');
      writeFileSync(fake, '#!/bin/sh\necho "ffmpeg version 9.9-test Copyright (c) the test"\n');
      chmodSync(fake, 0o755);
      voiceConfig({ ffmpeg: fake });
      expect(checks(await runCli(['doctor'], { env, cwd: dir })).get('ffmpeg')).toEqual({ verdict: 'ok', text: `ffmpeg version 9.9-test (voice.ffmpeg = "${fake}")` });

      const missing = path.join(dir, 'no-such-ffmpeg');
      voiceConfig({ ffmpeg: missing, speech_format: 'mp3' });
      expect(checks(await runCli(['doctor'], { env, cwd: dir })).get('ffmpeg')).toEqual({
        verdict: 'warn',
        text: `not found (voice.ffmpeg = "${missing}"); spoken replies in mp3 cannot be converted to OGG/Opus and go out as text — hint: install ffmpeg (apt-get install ffmpeg), point voice.ffmpeg at it, or set voice.speech_format: opus`,
      });
      voiceConfig({ ffmpeg: missing });
      expect(checks(await runCli(['doctor'], { env, cwd: dir })).get('ffmpeg')).toEqual({ verdict: 'warn', text: expect.stringContaining('spoken replies work only while the speech server answers in OGG/Opus') });
      // Spoken replies off: nothing needs ffmpeg.
      voiceConfig({ ffmpeg: missing, reply: 'never' });
      const off = checks(await runCli(['doctor'], { env, cwd: dir }));
      expect(off.get('ffmpeg')).toEqual({ verdict: 'ok', text: `not found (voice.ffmpeg = "${missing}"); only needed for spoken replies, which are off` });
      expect(off.get('voice')!.text).toContain('spoken replies off (voice.reply: never');
    });

    it('fails a voice role the server could not build, and warns about spoken replies that never happen', async () => {
      voiceConfig({}, { speech: { provider: 'speech' } });
      const res = await runCli(['doctor'], { env, cwd: dir });
      expect(res.code).toBe(1);
      expect(checks(res).get('voice')).toEqual({ verdict: 'FAIL', text: expect.stringContaining('"ai.roles.speech.model" is not set') });

      voiceConfig({}, { transcribe: null });
      expect(checks(await runCli(['doctor'], { env, cwd: dir })).get('voice')).toEqual({
        verdict: 'warn',
        text: expect.stringMatching(/^voice notes not set up \(no ai\.roles\.transcribe\); spoken replies \(when_voice\) .* — hint: spoken replies answer voice notes, which need ai\.roles\.transcribe/),
      });
    });
  });
  it('mcp: connects each configured server and lists its tools; a missing command fails with a hint; per-user servers are not connected', async () => {
    writeConfig({
      mcp: {
        connect_timeout_ms: 15000,
        servers: {
          everything: everythingServer(),
          missing: { transport: 'stdio', command: path.join(dir, 'no-such-mcp-server') },
          issues: { transport: 'http', url: 'http://127.0.0.1:9/mcp', auth: 'per_user' },
          off: { transport: 'stdio', command: 'nothing', enabled: false },
        },
      },
    });
    const res = await runCli(['doctor'], { env, cwd: dir });
    const found = checks(res);
    expect(found.get('mcp everything')).toEqual({ verdict: 'ok', text: expect.stringMatching(/^stdio ".*server-everything.*": \d+ tools \(echo, .*\)$/) });
    expect(found.get('mcp missing')).toEqual({
      verdict: 'FAIL',
      text: expect.stringMatching(/the command ".*no-such-mcp-server" was not found .* — hint: fix mcp\.servers\.missing or set enabled: false$/),
    });
    expect(found.get('mcp issues')).toEqual({ verdict: 'ok', text: "http http://127.0.0.1:9/mcp: auth per_user, connected with each user's own credentials (not checked here)" });
    expect(found.get('mcp off')).toEqual({ verdict: 'ok', text: 'stdio "nothing": disabled' });
    expect(res.code).toBe(1);
  });
});
