import type { Ctx } from '../../common/ctx';
import type { ExchangeListener, OutboundRequest, OutboundSender } from '../agent';
import type { ResultDelivery } from '../beats';
import type { WebhookService } from './webhook.service';
import { HOOK_CHANNEL } from './webhook-trigger';

/**
 * The agent's outbound port with webhook turns routed: a reply in a `hook:<name>` session (channel
 * `hook`, chat = the hook's name) goes to the hook's target chat, or to its owner's principal chat,
 * through the result delivery (split, idempotent per reply). Every other reply passes through as is.
 */
export class WebhookReplies implements OutboundSender {
  constructor(
    private readonly inner: OutboundSender,
    private readonly deps: { hooks: Pick<WebhookService, 'findByName'>; results: ResultDelivery },
  ) {}

  async deliver(ctx: Ctx, req: OutboundRequest): Promise<void> {
    if (req.channel !== HOOK_CHANNEL) return this.inner.deliver(ctx, req);
    const hook = await this.deps.hooks.findByName(ctx, req.chatId);
    if (!hook) {
      ctx.logger.warn({ webhook: req.chatId, messageId: req.messageId }, 'webhook result not delivered: the webhook was deleted');
      return;
    }
    const target = hook.targetChannel && hook.targetChatId ? { channel: hook.targetChannel, chatId: hook.targetChatId } : null;
    const sent = await this.deps.results.deliver(ctx, { userId: hook.ownerId, target, key: `reply:${req.messageId}`, text: `🔔 ${hook.name}\n${req.text}` });
    if (!sent) ctx.logger.warn({ webhook: hook.name, messageId: req.messageId }, 'webhook result not delivered: the owner has no chat to reach');
  }
}

/**
 * The exchange listener (the summarizer) without webhook turns: like a beat's run, a webhook's turn is
 * not condensed into the owner's memories, so what an outside system posts never becomes a memory.
 */
export function withoutWebhookTurns(listener: ExchangeListener): ExchangeListener {
  return {
    afterExchange: (ctx, session, exchange) => (session.channel === HOOK_CHANNEL ? Promise.resolve() : listener.afterExchange(ctx, session, exchange)),
  };
}
