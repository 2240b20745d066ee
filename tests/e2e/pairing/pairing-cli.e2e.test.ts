import { rmSync } from 'node:fs';
import { App } from '../../../server/app';
import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { AuditEntry } from '../../../server/modules/audit';
import { PairingService } from '../../../server/modules/pairing';
import { LogCapture } from '../../support/log-capture';
import { testConfig } from '../../support/test-app';
import { runCli, tempDir } from '../cli/run-cli';

/** Opens the data folder's database directly (no Redis, no HTTP) to arrange and verify state. */
async function withDb<T>(dir: string, fn: (app: App, sys: Ctx) => Promise<T>): Promise<T> {
  const app = await App.create({ config: testConfig(dir), logDestination: new LogCapture(), redis: false });
  try {
    return await fn(app, app.systemCtx('test'));
  } finally {
    await app.dispose();
  }
}

describe('muninn pairing list|approve|deny', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    dir = tempDir();
    env = { MUNINN_DATA_DIR: dir };
    [alice, bob] = await withDb(dir, async (app) => {
      const pairing = new PairingService(app.db, app.services.audit, app.services.users, null);
      const anonymous = new Ctx({ actor: { kind: 'anonymous' }, logger: app.logger });
      const codes: string[] = [];
      for (const [channel, handle, displayName] of [
        ['telegram', '4242', 'Alice Liddell'],
        ['whatsapp', '491511234567@s.whatsapp.net', null],
      ] as const) {
        const outcome = await pairing.request(anonymous, { channel, handle, displayName });
        if (outcome.kind !== 'created') throw new Error('expected a code');
        codes.push(outcome.request.code);
      }
      return codes as [string, string];
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('list prints the PENDING requests as a table, newest first', async () => {
    const res = await runCli(['pairing', 'list'], { env });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CODE\s+STATUS\s+IDENTITY\s+NAME\s+REQUESTED\s+EXPIRES$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(new RegExp(`^${bob}\\s+PENDING\\s+whatsapp:491511234567@s\\.whatsapp\\.net\\s+-\\s+\\d{4}-`));
    expect(lines[2]).toMatch(new RegExp(`^${alice}\\s+PENDING\\s+telegram:4242\\s+Alice Liddell\\s+`));
  });

  it('approve makes the sender a MEMBER with the identity, as the system actor, and says the CLI cannot tell them', async () => {
    const res = await runCli(['pairing', 'approve', alice.toLowerCase()], { env });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^Approved ${alice}: telegram:4242 is now Alice Liddell \\(\\S+\\), MEMBER\\.\\n$`));
    expect(res.stderr).toContain('the CLI cannot message the requester');
    await withDb(dir, async (app, sys) => {
      expect(await app.services.users.findByIdentity(sys, 'telegram', '4242')).toMatchObject({ displayName: 'Alice Liddell', trust: TrustLevel.MEMBER });
      const audit = await app.db.repo(sys, AuditEntry).findOneByOrFail({ action: 'pairing.approve' });
      expect(audit).toMatchObject({ actor: 'system:cli pairing approve', actorUserId: null });
    });
  });

  it('deny, then list by status; deciding again or an unknown code fails with a clear message', async () => {
    const denied = await runCli(['pairing', 'deny', bob], { env });
    expect(denied).toMatchObject({ code: 0, stdout: `Denied ${bob} (whatsapp:491511234567@s.whatsapp.net).\n` });
    expect((await runCli(['pairing', 'list'], { env })).stdout).toBe('No PENDING pairing requests.\n');
    const all = await runCli(['pairing', 'list', '--all'], { env });
    expect(all.stdout).toMatch(new RegExp(`${bob}\\s+DENIED`));
    expect(all.stdout).toMatch(new RegExp(`${alice}\\s+APPROVED`));
    const approvedOnly = await runCli(['pairing', 'list', '--status', 'approved'], { env });
    expect(approvedOnly.stdout.trimEnd().split('\n')).toHaveLength(2);

    expect(await runCli(['pairing', 'approve', bob], { env })).toMatchObject({ code: 1, stdout: '', stderr: `muninn: Pairing code ${bob} was already denied.\n` });
    expect(await runCli(['pairing', 'deny', 'ZZZZZZZZ'], { env })).toMatchObject({ code: 1, stderr: 'muninn: Pairing request ZZZZZZZZ was not found.\n' });
    expect((await runCli(['pairing', 'list', '--status', 'maybe'], { env })).stderr).toBe(
      'muninn: "maybe" is not a pairing status. Use one of: PENDING, APPROVED, DENIED, EXPIRED.\n',
    );
  });
});
