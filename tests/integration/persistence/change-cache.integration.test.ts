/**
 * Per-process copies of rarely changing rows (ChangeCache) across two processes' worth of services on one
 * SQLite file and one Redis: a change in one is seen by the other at its next read once the change is
 * announced; the writer's own process sees it at once; nothing is announced for a rolled-back write; and
 * no copy is kept while the other processes' changes cannot be heard.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { ENTITIES } from '../../../server/entities';
import { AuditService } from '../../../server/modules/audit';
import { ApiTokenService } from '../../../server/modules/auth';
import { User, UserService } from '../../../server/modules/users';
import { openDatabase } from '../../../server/persistence/data-source';
import { Db } from '../../../server/persistence/db';
import { RedisChangeTransport } from '../../../server/redis/redis-change-transport';
import { eventually } from '../../support/chat-helpers';
import { startPrivateRedis, type PrivateRedis } from '../../support/private-redis';
import { countSqlStatements, type SqlStatementCounter } from '../../support/sql-statement-counter';
import { testConfig } from '../../support/test-config';

const logger = pino({ level: 'silent' });
const system = () => Ctx.system(logger, 'test');

interface Process {
  db: Db;
  users: UserService;
  tokens: ApiTokenService;
  redis: Redis[];
}

let dir: string;
let server: PrivateRedis;
let sql: SqlStatementCounter;
const processes: Process[] = [];

async function startProcess(): Promise<Process> {
  const { dataSource } = await openDatabase(testConfig(dir), ENTITIES);
  const db = new Db(dataSource);
  const publisher = new Redis(server.url);
  const subscriber = new Redis(server.url);
  const transport = new RedisChangeTransport(publisher, subscriber, 'changes-test', logger);
  await transport.start();
  db.changes.connect(transport);
  const audit = new AuditService(db);
  const users = new UserService(db, audit, TrustLevel.GUEST);
  const p = { db, users, tokens: new ApiTokenService(db, users, audit), redis: [publisher, subscriber] };
  processes.push(p);
  return p;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-changes-'));
  server = await startPrivateRedis();
  sql = countSqlStatements();
});

afterAll(async () => {
  sql.stop();
  for (const p of processes) {
    await p.db.dataSource.destroy();
    for (const r of p.redis) if (r.status !== 'end') await r.quit();
  }
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('a token revoked or a trust changed in one process is seen by the other at its next read', async () => {
  const a = await startProcess();
  const b = await startProcess();
  const owner = await a.users.create(system(), { displayName: 'Owner', trust: TrustLevel.OWNER });
  const ownerCtx = new Ctx({ actor: { kind: 'user', userId: owner.id, trust: TrustLevel.OWNER }, logger });
  const member = await a.users.create(system(), { displayName: 'Member', trust: TrustLevel.MEMBER });
  const { token, apiToken } = await a.tokens.create(ownerCtx, member.id, 'cli');

  // Both processes keep a copy: a second verify reads nothing.
  expect((await b.tokens.verify(system(), token))?.user.trust).toBe(TrustLevel.MEMBER);
  expect((await a.tokens.verify(system(), token))?.user.trust).toBe(TrustLevel.MEMBER);
  expect((await b.users.current(system(), member.id))?.trust).toBe(TrustLevel.MEMBER);
  sql.reset();
  expect((await b.tokens.verify(system(), token))?.user.trust).toBe(TrustLevel.MEMBER);
  expect((await b.users.current(system(), member.id))?.trust).toBe(TrustLevel.MEMBER);
  expect(sql.total()).toBe(0);

  // A trust change: the writer's process at once, the other once told.
  await a.users.setTrust(ownerCtx, member.id, TrustLevel.TRUSTED);
  expect((await a.tokens.verify(system(), token))?.user.trust).toBe(TrustLevel.TRUSTED);
  await eventually(async () => (await b.tokens.verify(system(), token))?.user.trust === TrustLevel.TRUSTED, 5000, 'the other process to see the trust');
  await eventually(async () => (await b.users.current(system(), member.id))?.trust === TrustLevel.TRUSTED, 5000, 'the other process to see the user');

  // A revocation.
  await b.tokens.revoke(ownerCtx, apiToken.id);
  expect(await b.tokens.verify(system(), token)).toBeNull();
  await eventually(async () => (await a.tokens.verify(system(), token)) === null, 5000, 'the other process to refuse the token');
});

it('announces a change only once its transaction committed, and never for one rolled back', async () => {
  const p = processes[0]!;
  const heard: string[] = [];
  p.db.changes.onChange((topic) => void heard.push(String(topic)));
  await expect(
    p.db.withTransaction(system(), async (tx) => {
      p.db.changed(tx, 'plugins');
      expect(heard).toEqual([]);
      throw new Error('rolled back');
    }),
  ).rejects.toThrow('rolled back');
  expect(heard).toEqual([]);
  await p.db.withTransaction(system(), async (tx) => {
    await p.db.withTransaction(tx, async (inner) => p.db.changed(inner, 'skills'));
    expect(heard).toEqual([]);
  });
  expect(heard).toEqual(['skills']);
});

it('keeps no copy while the other processes cannot be heard', async () => {
  const p = processes[0]!;
  const user = await p.users.create(system(), { displayName: 'Quiet', trust: TrustLevel.MEMBER });
  expect((await p.users.current(system(), user.id))?.trust).toBe(TrustLevel.MEMBER);
  await p.redis[1]!.quit();
  await eventually(() => !p.db.changes.live, 5000, 'the feed to go quiet');
  // Another writer, unheard: the next read goes to the database.
  await p.db.repo(system(), User).update({ id: user.id }, { trust: TrustLevel.GUEST });
  expect((await p.users.current(system(), user.id))?.trust).toBe(TrustLevel.GUEST);
});
