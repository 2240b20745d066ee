import type { Ctx } from '../../../server/common/ctx';
import type { InboundMessage } from '../../../server/channels/channel.types';
import type { Deduper, DirectReplier } from '../../../server/channels/inbound-pipeline';

/** Platform message ids seen, in process (the Redis `SET NX` deduper's rule: the first sighting wins). */
export class InMemoryDeduper implements Deduper {
  private readonly keys = new Set<string>();

  async seen(key: string): Promise<boolean> {
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    return false;
  }
}

/** Direct answers to senders, recorded in order. */
export class RecordingReplier implements DirectReplier {
  readonly replies: Array<{ chatId: string; text: string }> = [];

  async reply(_ctx: Ctx, message: InboundMessage, text: string): Promise<void> {
    this.replies.push({ chatId: message.chatId, text });
  }

  texts(): string[] {
    return this.replies.map((r) => r.text);
  }
}
