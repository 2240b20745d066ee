import { SendRateLimiter } from '../../../../server/channels/whatsapp/send-rate-limiter';

/** A virtual clock: sleeping advances time instantly, so limits are checked exactly. */
function virtualClock() {
  let now = 1_000_000;
  const sleeps: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms: number) => (now += ms),
    sleeps,
  };
}

describe('SendRateLimiter', () => {
  it('spaces messages to one chat by 1 / perChatPerSecond', async () => {
    const clock = virtualClock();
    const limiter = new SendRateLimiter({ perChatPerSecond: 1, perMinute: 100, ...clock });
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      await limiter.acquire('a');
      times.push(clock.now());
    }
    expect(times.map((t) => t - times[0]!)).toEqual([0, 1000, 2000, 3000]);
  });

  it('counts the spacing from the end of a send that took a while, not from its start', async () => {
    const clock = virtualClock();
    const limiter = new SendRateLimiter({ perChatPerSecond: 1, perMinute: 100, ...clock });
    await limiter.acquire('a');
    const started = clock.now();
    clock.advance(300); // the send itself took 300 ms
    limiter.sent('a');
    await limiter.acquire('a');
    expect(clock.now() - started).toBe(1300);
    // A send that ended at once changes nothing.
    limiter.sent('a');
    expect(limiter.waitMs('a')).toBe(1000);
  });

  it('does not delay a different chat', async () => {
    const clock = virtualClock();
    const limiter = new SendRateLimiter({ perChatPerSecond: 0.5, perMinute: 100, ...clock });
    await limiter.acquire('a');
    expect(limiter.waitMs('a')).toBe(2000);
    expect(limiter.waitMs('b')).toBe(0);
  });

  it('allows at most perMinute sends in any rolling minute', async () => {
    const clock = virtualClock();
    const limiter = new SendRateLimiter({ perChatPerSecond: 1000, perMinute: 20, ...clock });
    const start = clock.now();
    const times: number[] = [];
    for (let i = 0; i < 45; i++) {
      await limiter.acquire(`chat-${i}`);
      times.push(clock.now() - start);
      clock.advance(100); // senders keep coming every 100 ms
    }
    for (let i = 0; i < times.length; i++) {
      const inWindow = times.filter((t) => t > times[i]! - 60_000 && t <= times[i]!).length;
      expect(inWindow).toBeLessThanOrEqual(20);
    }
    expect(times[19]).toBe(1900);
    expect(times[20]).toBe(60_000); // the 21st waits until the first leaves the window
    expect(times[40]).toBe(120_000);
  });

  it('never lets concurrent callers overrun the limit', async () => {
    const limiter = new SendRateLimiter({ perChatPerSecond: 1000, perMinute: 3 });
    const started = Date.now();
    await Promise.all([limiter.acquire('a'), limiter.acquire('b'), limiter.acquire('c')]);
    expect(Date.now() - started).toBeLessThan(50);
    expect(limiter.waitMs('d')).toBeGreaterThan(59_000);
  });

  it('rejects with the abort reason while waiting', async () => {
    const limiter = new SendRateLimiter({ perChatPerSecond: 0.1, perMinute: 10 });
    await limiter.acquire('a');
    const controller = new AbortController();
    const waiting = limiter.acquire('a', controller.signal);
    controller.abort(new Error('job cancelled'));
    await expect(waiting).rejects.toThrow('job cancelled');
    expect(limiter.waitMs('a')).toBeGreaterThan(9_000); // the aborted call did not take a slot
  });

  it('rejects invalid limits with a clear message', () => {
    expect(() => new SendRateLimiter({ perChatPerSecond: 0 })).toThrow('perChatPerSecond must be > 0');
    expect(() => new SendRateLimiter({ perMinute: 0 })).toThrow('perMinute must be >= 1');
  });
});
