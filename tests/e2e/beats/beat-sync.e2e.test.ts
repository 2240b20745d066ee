/**
 * Issue 9, beats acceptance 1: heartbeats.default.json is synced at every start. Entries are added,
 * changed and removed across restarts and the managed beats mirror the file exactly; a user beat with the
 * same name and text is never touched; a bad entry is skipped with a warning naming it and the fix.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dataOf } from '../../support/graphql-client';
import { BeatsDocument, CreateBeatDocument, type BeatsQuery } from '../../support/graphql/generated';
import { startTestApp, type TestApp } from '../../support/test-app';

type BeatRow = BeatsQuery['beats'][number];

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-beat-sync-'));
const file = path.join(dataDir, 'heartbeats.default.json');
let t: TestApp | null = null;

async function start(beats: unknown[]): Promise<TestApp> {
  writeFileSync(file, JSON.stringify({ beats }, null, 2));
  t = await startTestApp({ dataDir, keepData: true, config: { beats: { default_file: file } } });
  return t;
}

async function stop(): Promise<void> {
  await t?.close();
  t = null;
}

async function managed(app: TestApp): Promise<BeatRow[]> {
  const all = dataOf(await app.client(app.ownerToken).http(BeatsDocument, {})).beats;
  return all.filter((b) => b.managed).sort((a, b) => a.name.localeCompare(b.name));
}

/** What the file says, in the shape the API shows it. */
const shape = (b: BeatRow) => ({ name: b.name, kind: b.kind, text: b.text, cron: b.cron, timezone: b.timezone, at: b.at, targetChannel: b.targetChannel, targetChatId: b.targetChatId, enabled: b.enabled, userId: b.userId });

afterAll(async () => {
  await stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('heartbeats.default.json sync', () => {
  it('mirrors the file across restarts, skips bad entries with a warning and never touches user beats', async () => {
    // Start 1: two good entries and three bad ones.
    let app = await start([
      { name: 'morning', kind: 'reminder', text: 'Stand up and stretch', cron: '0 7 * * 1-5', timezone: 'Europe/Berlin' },
      { name: 'digest', kind: 'task', text: 'Summarise the news', cron: '0 18 * * *' },
      { name: 'broken-cron', text: 'never', cron: '61 * * * *' },
      { name: 'no-text', cron: '0 8 * * *' },
      { name: 'bad-zone', text: 'x', cron: '0 8 * * *', timezone: 'Mars/Olympus' },
    ]);
    expect((await managed(app)).map(shape)).toEqual([
      { name: 'digest', kind: 'TASK', text: 'Summarise the news', cron: '0 18 * * *', timezone: 'UTC', at: null, targetChannel: null, targetChatId: null, enabled: true, userId: null },
      { name: 'morning', kind: 'REMINDER', text: 'Stand up and stretch', cron: '0 7 * * 1-5', timezone: 'Europe/Berlin', at: null, targetChannel: null, targetChatId: null, enabled: true, userId: null },
    ]);
    const warnings = app.logs.entries().filter((e) => e.level === 40).map((e) => String(e.msg));
    expect(warnings.find((w) => w.includes('entry 3 ("broken-cron") skipped'))).toMatch(/61.*Fix: Use 5 fields/);
    expect(warnings.find((w) => w.includes('entry 4 ("no-text") skipped'))).toMatch(/"text" is missing\. Fix: add the reminder text/);
    expect(warnings.find((w) => w.includes('entry 5 ("bad-zone") skipped'))).toMatch(/Unknown time zone "Mars\/Olympus".*Fix: Use an IANA name/);
    // The next five runs of the managed beat are in its own time zone (07:00 Berlin is 05:00 or 06:00 UTC).
    const morning = (await managed(app)).find((b) => b.name === 'morning')!;
    expect(morning.nextRuns).toHaveLength(5);
    for (const run of morning.nextRuns) expect(new Date(run).toLocaleString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' })).toBe('07:00');

    // A user beat with the same name and text as a managed one.
    const owner = app.client(app.ownerToken);
    const userBeat = dataOf(await owner.http(CreateBeatDocument, { input: { name: 'morning', kind: 'REMINDER', text: 'Stand up and stretch', cron: '0 7 * * 1-5', timezone: 'Europe/Berlin' } })).createBeat;
    expect(userBeat.managed).toBe(false);
    const digestId = (await managed(app)).find((b) => b.name === 'digest')!.id;
    await stop();

    // Start 2: morning changed, digest removed, evening added, the bad entry fixed.
    app = await start([
      { name: 'morning', kind: 'reminder', text: 'Stand up, stretch, drink water', cron: '30 6 * * 1-5', timezone: 'Europe/Berlin', target: { channel: 'telegram', chat_id: '4242' } },
      { name: 'evening', kind: 'reminder', text: 'Lights out', at: '2099-01-01T21:00:00Z' },
      { name: 'broken-cron', text: 'now fine', cron: '0 * * * *', enabled: false },
    ]);
    expect((await managed(app)).map(shape)).toEqual([
      { name: 'broken-cron', kind: 'TASK', text: 'now fine', cron: '0 * * * *', timezone: 'UTC', at: null, targetChannel: null, targetChatId: null, enabled: false, userId: null },
      { name: 'evening', kind: 'REMINDER', text: 'Lights out', cron: null, timezone: 'UTC', at: '2099-01-01T21:00:00.000Z', targetChannel: null, targetChatId: null, enabled: true, userId: null },
      { name: 'morning', kind: 'REMINDER', text: 'Stand up, stretch, drink water', cron: '30 6 * * 1-5', timezone: 'Europe/Berlin', at: null, targetChannel: 'telegram', targetChatId: '4242', enabled: true, userId: null },
    ]);
    const all = dataOf(await app.client(app.ownerToken).http(BeatsDocument, {})).beats;
    expect(all.some((b) => b.id === digestId)).toBe(false);
    // The user's beat is exactly as it was.
    expect(all.find((b) => b.id === userBeat.id)).toEqual(userBeat);
    // The heartbeat queue holds one schedule per enabled cron beat: morning and the user's beat.
    const schedules = await app.app.chat!.beats.scheduler.scheduledBeatIds();
    const morningId = (await managed(app)).find((b) => b.name === 'morning')!.id;
    expect(schedules.sort()).toEqual([morningId, userBeat.id].sort());
    await stop();

    // Start 3: an empty file removes every managed beat, and only those.
    app = await start([]);
    expect(await managed(app)).toEqual([]);
    expect(dataOf(await app.client(app.ownerToken).http(BeatsDocument, {})).beats.map((b) => b.id)).toEqual([userBeat.id]);
  });
});
