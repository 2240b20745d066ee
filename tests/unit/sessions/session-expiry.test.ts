import { expiryReason, lastDailyReset } from '../../../server/modules/sessions';

const at = (y: number, mo: number, d: number, h: number, mi = 0) => new Date(y, mo - 1, d, h, mi);

describe('session expiry rules', () => {
  it('lastDailyReset is the latest reset hour at or before now (local time)', () => {
    expect(lastDailyReset(at(2026, 3, 10, 5, 30), 4)).toEqual(at(2026, 3, 10, 4));
    expect(lastDailyReset(at(2026, 3, 10, 3, 59), 4)).toEqual(at(2026, 3, 9, 4));
    expect(lastDailyReset(at(2026, 3, 10, 4, 0), 4)).toEqual(at(2026, 3, 10, 4));
    expect(lastDailyReset(at(2026, 3, 1, 0, 30), 23)).toEqual(at(2026, 2, 28, 23));
  });

  it('daily reset: stale when the last activity was before the latest reset', () => {
    const rules = { dailyResetHour: 4, idleMinutes: null };
    expect(expiryReason({ lastActivityAt: at(2026, 3, 10, 3, 50) }, at(2026, 3, 10, 4, 10), rules)).toBe('daily-reset');
    expect(expiryReason({ lastActivityAt: at(2026, 3, 10, 4, 5) }, at(2026, 3, 10, 23, 0), rules)).toBeNull();
    expect(expiryReason({ lastActivityAt: at(2026, 3, 9, 23, 0) }, at(2026, 3, 10, 3, 0), rules)).toBeNull();
  });

  it('idle: stale after idleMinutes without activity; both rules off by default', () => {
    const rules = { dailyResetHour: null, idleMinutes: 30 };
    expect(expiryReason({ lastActivityAt: at(2026, 3, 10, 10, 0) }, at(2026, 3, 10, 10, 29), rules)).toBeNull();
    expect(expiryReason({ lastActivityAt: at(2026, 3, 10, 10, 0) }, at(2026, 3, 10, 10, 30), rules)).toBe('idle');
    expect(expiryReason({ lastActivityAt: at(2020, 1, 1, 0, 0) }, at(2026, 3, 10, 10, 30), { dailyResetHour: null, idleMinutes: null })).toBeNull();
  });
});

describe('daily reset in a time zone (session.reset_timezone)', () => {
  it('resets at the hour of the configured zone, not the server clock', () => {
    // 04:00 in Tokyo (UTC+9) is 19:00 UTC the day before.
    expect(lastDailyReset(new Date('2026-03-10T20:00:00Z'), 4, 'Asia/Tokyo').toISOString()).toBe('2026-03-10T19:00:00.000Z');
    expect(lastDailyReset(new Date('2026-03-10T18:59:00Z'), 4, 'Asia/Tokyo').toISOString()).toBe('2026-03-09T19:00:00.000Z');
    // New York: 04:00 EST (UTC-5) before the DST change, 04:00 EDT (UTC-4) after it (2026-03-08).
    expect(lastDailyReset(new Date('2026-03-07T12:00:00Z'), 4, 'America/New_York').toISOString()).toBe('2026-03-07T09:00:00.000Z');
    expect(lastDailyReset(new Date('2026-03-09T12:00:00Z'), 4, 'America/New_York').toISOString()).toBe('2026-03-09T08:00:00.000Z');
    expect(lastDailyReset(new Date('2026-03-10T10:00:00Z'), 0, 'UTC').toISOString()).toBe('2026-03-10T00:00:00.000Z');
  });

  it('expiryReason follows the zone: the same instants are stale in one zone and fresh in another', () => {
    const last = new Date('2026-03-10T18:30:00Z');
    const now = new Date('2026-03-10T19:30:00Z');
    // 04:00 Tokyo = 19:00 UTC falls between the two; 04:00 Berlin (03:00 UTC) does not.
    expect(expiryReason({ lastActivityAt: last }, now, { dailyResetHour: 4, timeZone: 'Asia/Tokyo', idleMinutes: null })).toBe('daily-reset');
    expect(expiryReason({ lastActivityAt: last }, now, { dailyResetHour: 4, timeZone: 'Europe/Berlin', idleMinutes: null })).toBeNull();
  });
});
