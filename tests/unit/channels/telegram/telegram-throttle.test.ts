import { SendThrottle, type SendThrottleRules } from '../../../../server/channels/telegram/telegram-throttle';

const RULES: SendThrottleRules = {
  chat: { burst: 4, everyMs: 1000, gapMs: 0 },
  group: { burst: 20, everyMs: 3000, gapMs: 1000 },
  global: { burst: 30, everyMs: 1000 / 30, gapMs: 0 },
};

/** A send that records when it started (fake clock) and finishes at once, or when `hold` is released. */
function recorder() {
  const started: Array<{ chat: string; n: number; at: number }> = [];
  const make = (chat: string, n: number, hold?: Promise<void>) => async () => {
    started.push({ chat, n, at: Date.now() });
    await hold;
    return n;
  };
  return { started, make };
}

/** Lets every promise that can settle without a timer settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

describe('SendThrottle', () => {
  it('starts a burst of four at once with no timer, then one a second, in order', async () => {
    const throttle = new SendThrottle(RULES, () => Date.now());
    const { started, make } = recorder();
    const done = Array.from({ length: 6 }, (_, n) => throttle.run('7', make('7', n)));
    await settle();
    expect(started.map((s) => s.n)).toEqual([0, 1, 2, 3]);
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(999);
    expect(started).toHaveLength(4);
    await jest.advanceTimersByTimeAsync(1);
    expect(started.map((s) => s.n)).toEqual([0, 1, 2, 3, 4]);
    await jest.advanceTimersByTimeAsync(1000);
    expect(await Promise.all(done)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(started.map((s) => s.at - 1_000_000)).toEqual([0, 0, 0, 0, 1000, 2000]);
  });

  it('refills while the chat is quiet: a send a second apart never waits', async () => {
    const throttle = new SendThrottle(RULES, () => Date.now());
    const { started, make } = recorder();
    for (let n = 0; n < 10; n++) {
      void throttle.run('7', make('7', n));
      await settle();
      expect(started).toHaveLength(n + 1);
      await jest.advanceTimersByTimeAsync(1000);
    }
  });

  it('runs one send of a chat at a time (a 429 wait inside holds the chat) while other chats go on', async () => {
    const throttle = new SendThrottle(RULES, () => Date.now());
    const { started, make } = recorder();
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    void throttle.run('7', make('7', 0, hold));
    void throttle.run('7', make('7', 1));
    void throttle.run('8', make('8', 2));
    await settle();
    expect(started.map((s) => s.n)).toEqual([0, 2]);
    release();
    await settle();
    expect(started.map((s) => s.n)).toEqual([0, 2, 1]);
  });

  it('keeps group messages at least a second apart', async () => {
    const throttle = new SendThrottle(RULES, () => Date.now());
    const { started, make } = recorder();
    void throttle.run('-100', make('-100', 0));
    void throttle.run('-100', make('-100', 1));
    await settle();
    expect(started).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1000);
    expect(started.map((s) => s.at - 1_000_000)).toEqual([0, 1000]);
  });

  it('holds all chats together to 30 a second', async () => {
    const throttle = new SendThrottle(RULES, () => Date.now());
    const { started, make } = recorder();
    for (let n = 0; n < 31; n++) void throttle.run(String(n + 1), make(String(n + 1), n));
    await settle();
    expect(started).toHaveLength(30);
    await jest.advanceTimersByTimeAsync(34);
    expect(started).toHaveLength(31);
  });

  it('drops a waiting send when its signal aborts, and the chat goes on', async () => {
    const throttle = new SendThrottle(RULES, () => Date.now());
    const { started, make } = recorder();
    for (let n = 0; n < 4; n++) void throttle.run('7', make('7', n));
    const stop = new AbortController();
    const waiting = throttle.run('7', make('7', 4), stop.signal);
    await settle();
    stop.abort(new Error('shutting down'));
    await expect(waiting).rejects.toThrow('shutting down');
    const next = throttle.run('7', make('7', 5));
    await jest.advanceTimersByTimeAsync(1000);
    expect(await next).toBe(5);
    expect(started.map((s) => s.n)).toEqual([0, 1, 2, 3, 5]);
  });
});
