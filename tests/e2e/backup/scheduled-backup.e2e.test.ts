/**
 * Scheduled backups (issue 22): `backup.enabled` adds the managed beat `__backup__` on `backup.cron`; each
 * run writes an archive that `--verify` accepts into `backup.dir`, keeping the newest `backup.keep`.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { BackupService } from '../../../server/modules/backup';
import { sqliteFilePath } from '../../../server/persistence/data-source';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { startTestApp, type TestApp } from '../../support/test-app';

const BEATS = /* GraphQL */ `query { beats { id name managed cron } }`;
const RUN = /* GraphQL */ `mutation Run($id: ID!) { runBeat(id: $id) { status output error } }`;

let t: TestApp;
let owner: GraphQLTestClient;

beforeAll(async () => {
  t = await startTestApp({ config: { backup: { enabled: true, cron: '15 2 * * *', keep: 2 } } });
  owner = t.client(t.ownerToken);
});

afterAll(async () => {
  await owner.close();
  await t.close();
});

it('runs as the managed beat __backup__ and keeps the newest backup.keep archives, each verifiable', async () => {
  const beats = dataOf(await owner.http<{ beats: Array<{ id: string; name: string; managed: boolean; cron: string }> }, unknown>(BEATS)).beats;
  const beat = beats.find((b) => b.name === '__backup__');
  expect(beat).toMatchObject({ managed: true, cron: '15 2 * * *' });
  for (let i = 0; i < 3; i++) {
    const run = dataOf(await owner.http<{ runBeat: { status: string; output: string; error: string | null } }, unknown>(RUN, { id: beat!.id })).runBeat;
    expect(run).toMatchObject({ status: 'OK', error: null });
    expect(run.output).toMatch(/^Backup muninn-.*\.tar\.gz written \(\d+ rows, [\d.]+ KiB\); \d kept, \d removed\.$/);
  }
  const dir = path.join(t.dataDir, 'backups');
  const files = readdirSync(dir).filter((f) => f.endsWith('.tar.gz'));
  expect(files).toHaveLength(2);
  const service = new BackupService({ dataDir: t.dataDir, sqliteFile: sqliteFilePath(t.config), databaseUrl: t.config.database.url });
  for (const f of files) {
    const report = await service.verify(path.join(dir, f));
    expect(report.manifest.tables.users).toBeGreaterThanOrEqual(1);
    // Backups never contain earlier backups.
    expect(report.manifest.files.some((e) => e.path.includes('backups/'))).toBe(false);
  }
});
