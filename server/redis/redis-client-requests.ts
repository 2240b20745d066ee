import type { Redis } from 'ioredis';
import type { ClientRequests, ClientTurnRequest } from '../modules/agent';
import type { Message, Session } from '../modules/sessions';

/** Sessions of the OpenAI-compatible API (`api:<userId>:…`): the only ones whose turns may carry a client request. */
const API_SESSION = /^api:/;

/**
 * The client request of an API message (its system text, client tools, `max_tokens`), kept on Redis for
 * an hour under the request id the message was stored with (the tail of its dedupe key), so the turn can
 * find it on whichever worker runs it. Other channels' turns cost no round trip.
 */
export class RedisClientRequests implements ClientRequests {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds = 3600,
  ) {}

  private key(requestId: string): string {
    return `${this.prefix}:api-request:${requestId}`;
  }

  /** Keeps `request` for the message stored with `requestId`; nothing is written for an empty request. */
  async put(requestId: string, request: ClientTurnRequest): Promise<void> {
    const empty = !request.instructions && !request.tools?.length && !request.maxTokens && !request.toolChoice;
    if (empty) return;
    await this.redis.set(this.key(requestId), JSON.stringify(request), 'EX', this.ttlSeconds);
  }

  async forTurn(session: Session, batch: Message[]): Promise<ClientTurnRequest | null> {
    if (!API_SESSION.test(session.key)) return null;
    const dedupeKey = batch[batch.length - 1]?.dedupeKey;
    if (!dedupeKey) return null;
    const raw = await this.redis.get(this.key(dedupeKey.slice(dedupeKey.lastIndexOf(':') + 1)));
    return raw ? (JSON.parse(raw) as ClientTurnRequest) : null;
  }
}
