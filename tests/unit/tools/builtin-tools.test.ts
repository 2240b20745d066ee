import { Ctx } from '../../../server/common/ctx';
import { createLogger } from '../../../server/common/logger';
import { SecretRedactor } from '../../../server/common/secret-redactor';
import { TrustLevel } from '../../../server/common/trust';
import { loadConfig } from '../../../server/config';
import { createBuiltinTools, createCurrentTimeTool, createShellTool, ToolRefusedError, type ToolContext } from '../../../server/modules/tools';
import { LogCapture } from '../../support/log-capture';

const logger = createLogger({ level: 'silent', destination: new LogCapture(), redactor: new SecretRedactor() });
const tc = (signal = new AbortController().signal): ToolContext => ({
  ctx: new Ctx({ actor: { kind: 'user', userId: 'owner', trust: TrustLevel.OWNER }, logger }),
  sessionId: 's',
  channel: 'tui',
  chatId: null,
  signal,
});
const users = { findByIdentity: async () => null, identitiesOf: async () => [], findOne: async () => null };
const sender = { send: async () => undefined };

describe('createBuiltinTools', () => {
  it('registers web_search, send_message and shell only when configured', () => {
    const minimal = loadConfig({ raw: {}, env: {} });
    expect(createBuiltinTools({ tools: minimal.tools, users }).map((t) => t.name)).toEqual(['current_time', 'http_request']);
    const full = loadConfig({
      raw: { tools: { web_search: { searxng_url: 'http://127.0.0.1:8888' }, shell: { enabled: true, allow: ['ls'] } } },
      env: {},
    });
    const tools = createBuiltinTools({ tools: full.tools, users, messageSender: sender });
    expect(tools.map((t) => t.name)).toEqual(['current_time', 'http_request', 'web_search', 'send_message', 'shell']);
    expect(tools.map((t) => [t.name, t.minTrust, t.requiresApproval ?? false])).toEqual([
      ['current_time', 'MEMBER', false],
      ['http_request', 'TRUSTED', false],
      ['web_search', 'TRUSTED', false],
      ['send_message', 'TRUSTED', false],
      ['shell', 'OWNER', true],
    ]);
  });
});

describe('current_time', () => {
  const tool = createCurrentTimeTool({ now: () => new Date('2030-01-02T03:04:05Z') });

  it('returns the time in the asked time zone', async () => {
    const out = (await tool.run(tc(), tool.schema.parse({ timezone: 'Asia/Tokyo' }))) as Record<string, unknown>;
    expect(out).toMatchObject({ iso: '2030-01-02T03:04:05.000Z', timezone: 'Asia/Tokyo', unixMs: Date.parse('2030-01-02T03:04:05Z') });
    expect(out.local).toContain('12:04:05');
  });

  it('rejects unknown time zones at validation, naming the field', () => {
    const r = tool.schema.safeParse({ timezone: 'Mars/Olympus_Mons' });
    expect(r.success).toBe(false);
    expect(r.error!.issues[0]!.path).toEqual(['timezone']);
  });
});

describe('shell', () => {
  const shell = (allow = ['echo', 'cat', 'sleep', 'sh-not-used', 'false']) =>
    createShellTool({ allow, timeoutMs: 300, maxOutputChars: 1000 });

  it('runs an allowlisted program with arguments, without a shell', async () => {
    const tool = shell();
    const out = (await tool.run(tc(), { argv: ['echo', '$HOME', '`id`', ';', 'rm', '-rf', '/'] })) as Record<string, unknown>;
    expect(out).toMatchObject({ exitCode: 0, signal: null, stdout: '$HOME `id` ; rm -rf /\n', stderr: '' });
  });

  it('refuses programs that are not on the allowlist (exact argv[0])', async () => {
    const tool = shell(['echo']);
    await expect(tool.run(tc(), { argv: ['/bin/echo', 'x'] })).rejects.toBeInstanceOf(ToolRefusedError);
    await expect(tool.run(tc(), { argv: ['bash', '-c', 'echo pwned'] })).rejects.toThrow('"bash" is not in tools.shell.allow');
  });

  it('reports non-zero exit codes and stderr', async () => {
    const out = (await shell().run(tc(), { argv: ['cat', '/definitely/not/here'] })) as Record<string, unknown>;
    expect(out.exitCode).toBe(1);
    expect(out.stderr).toContain('No such file');
  });

  it('kills a command after its timeout', async () => {
    const started = Date.now();
    const out = (await shell().run(tc(), { argv: ['sleep', '5'] })) as Record<string, unknown>;
    expect(out).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: 'killed after 300 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('does not pass the server environment to commands', async () => {
    process.env.MUNINN_TEST_SECRET = 'do-not-leak';
    try {
      const tool = createShellTool({ allow: ['env'], timeoutMs: 2000, maxOutputChars: 10_000 });
      const out = (await tool.run(tc(), { argv: ['env'] })) as Record<string, string>;
      expect(out.stdout).not.toContain('do-not-leak');
      expect(out.stdout).toContain('PATH=');
    } finally {
      delete process.env.MUNINN_TEST_SECRET;
    }
  });

  it('caps stdout', async () => {
    const tool = createShellTool({ allow: ['head'], timeoutMs: 2000, maxOutputChars: 100 });
    const out = (await tool.run(tc(), { argv: ['head', '-c', '300', '/dev/zero'] })) as Record<string, string>;
    expect(out.stdout).toMatch(/\n\[truncated 200 chars\]$/);
  });

  it('stops when the turn is aborted', async () => {
    const controller = new AbortController();
    const running = shell().run(tc(controller.signal), { argv: ['sleep', '5'] });
    setTimeout(() => controller.abort(), 50);
    await expect(running).rejects.toThrow('stopped');
  });

  it('validates argv', () => {
    const tool = shell();
    expect(tool.schema.safeParse({ argv: [] }).success).toBe(false);
    expect(tool.schema.safeParse({ argv: 'echo hi' }).success).toBe(false);
    expect(tool.schema.safeParse({ argv: ['echo'], shell: true }).success).toBe(false);
  });
});
