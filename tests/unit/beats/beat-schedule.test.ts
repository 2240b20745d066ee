import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkCron, checkFrequency, nextCronRuns, previewRuns, readDefaultBeats } from '../../../server/modules/beats';

const FROM = new Date('2030-03-30T12:00:00Z');

describe('beat schedules', () => {
  it('accepts 5 and 6 fields and refuses anything else with the fix', () => {
    expect(checkCron('  0  7 * * 1-5 ', 'Europe/Berlin')).toBe('0 7 * * 1-5');
    expect(checkCron('*/10 * * * * *', 'UTC')).toBe('*/10 * * * * *');
    expect(() => checkCron('0 7 * *', 'UTC')).toThrow(/has 4 field\(s\)\. Use 5 fields "minute hour day-of-month month day-of-week"/);
    expect(() => checkCron('0 25 * * *', 'UTC')).toThrow(/^Invalid cron expression "0 25 \* \* \*": .*25.*Use 5 fields/);
    expect(() => checkCron('0 7 * * *', 'Berlin')).toThrow('Unknown time zone "Berlin". Use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York".');
  });

  it('previews runs in the beat\'s time zone, across a DST change', () => {
    // Berlin switches to summer time on 31 March 2030: 07:00 local is 06:00 UTC before and 05:00 UTC after.
    expect(nextCronRuns('0 7 * * *', 'Europe/Berlin', FROM, 3).map((d) => d.toISOString())).toEqual([
      '2030-03-31T05:00:00.000Z',
      '2030-04-01T05:00:00.000Z',
      '2030-04-02T05:00:00.000Z',
    ]);
    expect(previewRuns({ cron: null, timezone: 'UTC', at: new Date('2030-04-01T00:00:00Z') }, FROM)).toHaveLength(1);
    expect(previewRuns({ cron: null, timezone: 'UTC', at: new Date('2030-01-01T00:00:00Z') }, FROM)).toEqual([]);
  });

  it('measures the shortest gap, also of irregular schedules', () => {
    expect(() => checkFrequency('*/5 * * * *', 'UTC', 5, FROM)).not.toThrow();
    expect(() => checkFrequency('0 7 * * *', 'UTC', 5, FROM)).not.toThrow();
    expect(() => checkFrequency('0,2 7 * * *', 'UTC', 5, FROM)).toThrow(/runs every 2 min; beats may run at most every 5 minutes below ADMIN/);
    expect(() => checkFrequency('*/30 * * * * *', 'UTC', 5, FROM)).toThrow(/runs every 30 s/);
  });
});

describe('heartbeats.default.json', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-beats-unit-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (content: string) => {
    const file = path.join(dir, `${Math.random()}.json`);
    writeFileSync(file, content);
    return file;
  };

  it('reads good entries and warns about each bad one by number, name and fix', () => {
    const file = write(
      JSON.stringify([
        { name: 'ok', text: 'hi', cron: '0 7 * * *' },
        { name: 'ok', text: 'again', cron: '0 8 * * *' },
        { name: '__mine__', text: 'x', cron: '0 8 * * *' },
        { name: 'both', text: 'x', cron: '0 8 * * *', at: '2099-01-01T00:00:00Z' },
        { name: 'typo', text: 'x', cronn: '0 8 * * *' },
        'not an object',
      ]),
    );
    const { beats, warnings } = readDefaultBeats(file, 'UTC', FROM);
    expect(beats.map((b) => b.name)).toEqual(['ok']);
    expect(warnings).toEqual([
      expect.stringMatching(/entry 2 \("ok"\) skipped: the name "ok" is used by an earlier entry\. Fix: give every entry its own name$/),
      expect.stringMatching(/entry 3 \("__mine__"\) skipped: names starting with "__" are reserved .*Fix: rename the entry$/),
      expect.stringMatching(/entry 4 \("both"\) skipped: give either "cron" or "at"\. Fix: add "cron"/),
      expect.stringMatching(/entry 5 \("typo"\) skipped: .*Fix: write it like \{ "name": "morning"/),
      expect.stringMatching(/entry 6 skipped: .*Fix: write it like/),
    ]);
  });

  it('a missing file means no managed beats; a broken one is an error that leaves them alone', () => {
    expect(readDefaultBeats(path.join(dir, 'absent.json'), 'UTC', FROM)).toEqual({ beats: [], warnings: [] });
    expect(() => readDefaultBeats(write('{ "beats": [ '), 'UTC', FROM)).toThrow(/is not valid JSON .* Managed beats were left as they are\./);
    expect(() => readDefaultBeats(write('{ "beat": [] }'), 'UTC', FROM)).toThrow(/must hold \{ "beats": \[ … \] \}/);
  });
});
