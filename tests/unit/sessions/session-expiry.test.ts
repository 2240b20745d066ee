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
