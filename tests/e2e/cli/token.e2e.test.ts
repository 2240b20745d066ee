import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { dataOf } from '../../support/graphql-client';
import { AuditLogDocument, CreateUserDocument, MeDocument } from '../../support/graphql/generated';
import { startTestApp, type TestApp } from '../../support/test-app';
import { runCli, tempDir } from './run-cli';

const TOKEN_LINE = /^mun_[A-Za-z0-9_-]{20,}\n$/;

describe('muninn token create', () => {
  describe('--user owner on an empty data folder', () => {
    let dir: string;
    let t: TestApp | undefined;
    afterAll(async () => {
      await t?.close();
    });

    it('creates the OWNER like a first start and prints a token that authenticates', async () => {
      dir = tempDir();
      const res = await runCli(['token', 'create', '--user', 'owner', '--name', 'ci'], {
        env: { MUNINN_DATA_DIR: dir },
      });
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(TOKEN_LINE);
      expect(res.stderr).toContain('There was no OWNER yet: created one');
      expect(res.stderr).toContain('shown only this once');
      expect(res.stderr).not.toContain(res.stdout.trim());
      const ownerTokenFile = path.join(dir, 'owner.token');
      expect(existsSync(ownerTokenFile)).toBe(true);

      t = await startTestApp({ dataDir: dir });
      const me = dataOf(await t.client(res.stdout.trim()).http(MeDocument)).me;
      expect(me.trust).toBe('OWNER');
      // The server reuses the OWNER the CLI created; the printed token is a second one of the same user.
      expect(t.ownerToken).toBe(readFileSync(ownerTokenFile, 'utf8').trim());
      expect(t.ownerToken).not.toBe(res.stdout.trim());
      expect(dataOf(await t.client(t.ownerToken).http(MeDocument)).me.id).toBe(me.id);
    });

    it('a second run reuses the OWNER and says nothing about creating one', async () => {
      const res = await runCli(['token', 'create', '--user', 'OWNER'], { env: { MUNINN_DATA_DIR: dir } });
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(TOKEN_LINE);
      expect(res.stderr).not.toContain('no OWNER yet');
      expect(dataOf(await t!.client(res.stdout.trim()).http(MeDocument)).me.trust).toBe('OWNER');
    });
  });

  describe('in the data folder of a running server', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t.close();
    });

    it('creates a token for a user id, audit-logged with the CLI as system actor', async () => {
      const owner = t.client(t.ownerToken);
      const alice = dataOf(
        await owner.http(CreateUserDocument, { input: { displayName: 'Alice' } }),
      ).createUser;

      const res = await runCli(['token', 'create', '--user', String(alice.id), '--name', 'laptop'], {
        env: { MUNINN_DATA_DIR: t.dataDir },
      });
      expect(res.code).toBe(0);
      expect(res.stdout).toMatch(TOKEN_LINE);
      expect(res.stderr).toContain('for Alice (MEMBER');

      const me = dataOf(await t.client(res.stdout.trim()).http(MeDocument)).me;
      expect(me).toMatchObject({ id: alice.id, displayName: 'Alice', trust: 'MEMBER' });

      const audit = dataOf(
        await owner.http(AuditLogDocument, { filter: { action: 'token.create' } }),
      ).auditLog.edges.map((e) => e.node);
      expect(audit.find((a) => (a.details as { name?: string } | null)?.name === 'laptop')).toMatchObject({
        actor: 'system:cli token create',
        actorUserId: null,
        details: { userId: alice.id, name: 'laptop' },
      });
    });

    it('refuses an unknown user with exit 1, a clear message and nothing on stdout', async () => {
      const res = await runCli(['token', 'create', '--user', 'no-such-user'], {
        env: { MUNINN_DATA_DIR: t.dataDir },
      });
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toBe(
        'muninn: No user with id "no-such-user". Run "muninn users list" to see the ids, or use --user owner.\n',
      );
    });

    it('requires --user', async () => {
      const res = await runCli(['token', 'create'], { env: { MUNINN_DATA_DIR: t.dataDir } });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain("required option '--user <id|owner>' not specified");
    });
  });
});
