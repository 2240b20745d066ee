/** Data is kept across a restart on the same data folder (issue 2 acceptance 2). */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataOf } from '../support/graphql-client';
import { MeDocument, MemoriesDocument, UserDocument, UsersDocument } from '../support/graphql/generated';
import { createMemoryFor, createUserWithToken, insertSession } from '../support/fixtures';
import { startTestApp } from '../support/test-app';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-restart-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

it('keeps users, tokens, memories and sessions, and does not bootstrap a second OWNER', async () => {
  // --- first run
  const first = await startTestApp({ dataDir, keepData: true });
  expect(first.app.appliedMigrations.length).toBeGreaterThan(0);
  const tokenFile = path.join(dataDir, 'owner.token');
  const ownerTokenBefore = readFileSync(tokenFile, 'utf8');
  const statBefore = statSync(tokenFile);
  expect(statBefore.mode & 0o777).toBe(0o600);
  const owner1 = first.client(first.ownerToken);
  const ownerId = dataOf(await owner1.http(MeDocument)).me.id;
  const member = await createUserWithToken(owner1, 'TRUSTED', 'Ada');
  const memoryId = await createMemoryFor(owner1, member.id, 'Ada likes tea');
  const { sessionId } = await insertSession(first, member.id, 'remember me');
  await owner1.close();
  await first.close();

  // --- second run on the same folder
  const second = await startTestApp({ dataDir, keepData: true });
  try {
    expect(second.app.appliedMigrations).toEqual([]);
    expect(readFileSync(tokenFile, 'utf8')).toBe(ownerTokenBefore);
    expect(statSync(tokenFile).mtimeMs).toBe(statBefore.mtimeMs);
    expect(second.ownerToken).toBe(first.ownerToken);

    const owner2 = second.client(second.ownerToken);
    expect(dataOf(await owner2.http(MeDocument)).me).toMatchObject({ id: ownerId, trust: 'OWNER' });
    const owners = dataOf(await owner2.http(UsersDocument, { trust: 'OWNER' })).users;
    expect(owners.totalCount).toBe(1);
    expect(dataOf(await owner2.http(UserDocument, { id: member.id })).user).toMatchObject({
      displayName: 'Ada',
      trust: 'TRUSTED',
    });

    // The member's token, created in the first run, still works and sees the member's data.
    const ada = second.client(member.token);
    expect(dataOf(await ada.http(MeDocument)).me.id).toBe(member.id);
    const memories = dataOf(await ada.http(MemoriesDocument, {})).memories.edges.map((e) => e.node);
    expect(memories).toEqual([expect.objectContaining({ id: memoryId, content: 'Ada likes tea' })]);
    const session = await second.app.services.sessions.getVisible(second.app.systemCtx('test'), sessionId);
    expect(session.userId).toBe(member.id);
    await ada.close();
    await owner2.close();
  } finally {
    await second.close();
  }
});
