/** Sends one presence update; expected not to throw. */
export type SendPresence = (type: 'composing' | 'paused', chatId: string) => Promise<void>;

/**
 * "composing…" per chat while a turn runs. WhatsApp clients drop the indicator after about 25 s, so it
 * is re-sent every `refreshMs` while on, for at most `maxMs` (a turn that never says "off" does not
 * keep a chat composing forever).
 */
export class ComposingPresence {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly send: SendPresence,
    private readonly refreshMs = 10_000,
    private readonly maxMs = 5 * 60_000,
  ) {}

  async set(chatId: string, on: boolean): Promise<void> {
    clearInterval(this.timers.get(chatId));
    this.timers.delete(chatId);
    if (on) {
      const since = Date.now();
      const timer = setInterval(() => {
        if (Date.now() - since <= this.maxMs) void this.send('composing', chatId);
        else void this.set(chatId, false);
      }, this.refreshMs);
      this.timers.set(chatId, timer);
    }
    await this.send(on ? 'composing' : 'paused', chatId);
  }

  /** Stops every refresh (on stop; nothing is sent). */
  clear(): void {
    for (const timer of this.timers.values()) clearInterval(timer);
    this.timers.clear();
  }
}
