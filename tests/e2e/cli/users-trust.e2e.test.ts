import { rmSync } from 'node:fs';
import { App } from '../../../server/app';
import { TrustLevel } from '../../../server/common/trust';
import { LogCapture } from '../../support/log-capture';
import { testConfig } from '../../support/test-app';
import { runCli, tempDir } from './run-cli';

/** Opens the data folder's database directly (no Redis, no HTTP) to arrange and verify state. */
async function withDb<T>(dir: string, fn: (app: App) => Promise<T>): Promise<T> {
  const app = await App.create({ config: testConfig(dir), logDestination: new LogCapture(), redis: false });
  try {
    return await fn(app);
  } finally {
    await app.dispose();
  }
}

describe('muninn users list and trust set', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let ownerId: string;
  let aliceId: string;

  beforeAll(async () => {
    dir = tempDir();
    env = { MUNINN_DATA_DIR: dir };
    expect((await runCli(['token', 'create', '--user', 'owner'], { env })).code).toBe(0);
    await withDb(dir, async (app) => {
      const ctx = app.systemCtx('test');
      ownerId = (await app.services.users.findOwner(ctx))!.id;
      const alice = await app.services.users.create(ctx, { displayName: 'Alice Liddell' });
      await app.services.users.linkIdentity(ctx, alice.id, 'telegram', '4242');
      await app.services.users.linkIdentity(ctx, alice.id, 'web', alice.id);
      aliceId = alice.id;
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const trustOf = (id: string) =>
    withDb(dir, async (app) => (await app.services.users.get(app.systemCtx('test'), id)).trust);

  it('users list prints a table with the owner and every identity', async () => {
    const res = await runCli(['users', 'list'], { env });
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TRUST\s+DISPLAY NAME\s+IDENTITIES$/);
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(new RegExp(`^${ownerId}\\s+OWNER\\s+Owner\\s+-$`));
    expect(lines[2]).toMatch(
      new RegExp(`^${aliceId}\\s+MEMBER\\s+Alice Liddell\\s+telegram:4242, web:${aliceId}$`),
    );
    // Columns line up: TRUST starts at the same offset on every row.
    expect(new Set(lines.map((l) => l.search(/(TRUST|OWNER|MEMBER)/))).size).toBe(1);
  });

  it('users list on an empty database explains how the first user appears', async () => {
    const empty = tempDir();
    const res = await runCli(['users', 'list'], { env: { MUNINN_DATA_DIR: empty } });
    rmSync(empty, { recursive: true, force: true });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('No users yet');
  });

  it('trust set changes the trust level (case-insensitive) and prints the change', async () => {
    const res = await runCli(['trust', 'set', aliceId, 'admin'], { env });
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(res.stdout).toBe(`Alice Liddell (${aliceId}): MEMBER → ADMIN\n`);
    expect(await trustOf(aliceId)).toBe(TrustLevel.ADMIN);
  });

  it('trust set records the change in the audit log as the system actor', async () => {
    const entries = await withDb(dir, (app) =>
      app.services.audit.list(
        app.systemCtx('test'),
        { action: 'user.trust.set' },
        { first: 10, afterId: null },
      ),
    );
    expect(entries.nodes).toEqual([
      expect.objectContaining({
        actor: 'system:cli trust set',
        targetId: aliceId,
        details: { from: 'MEMBER', to: 'ADMIN' },
      }),
    ]);
  });

  it('trust set rejects an unknown level and lists the valid ones, without touching the user', async () => {
    const res = await runCli(['trust', 'set', aliceId, 'SUPERUSER'], { env });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toBe(
      'muninn: "SUPERUSER" is not a trust level. Use one of: BLOCKED, GUEST, MEMBER, TRUSTED, ADMIN, OWNER.\n',
    );
    expect(await trustOf(aliceId)).toBe(TrustLevel.ADMIN);
  });

  it('trust set refuses an unknown user and demoting the last OWNER', async () => {
    const unknown = await runCli(['trust', 'set', 'nobody', 'GUEST'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No user with id "nobody"');

    const lastOwner = await runCli(['trust', 'set', ownerId, 'MEMBER'], { env });
    expect(lastOwner.code).toBe(1);
    expect(lastOwner.stderr).toBe('muninn: This is the last OWNER; make another user OWNER first.\n');
    expect(await trustOf(ownerId)).toBe(TrustLevel.OWNER);
  });
});
