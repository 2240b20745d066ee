import type { Redis } from 'ioredis';
import type { MailChat, MailClaim, MailHead, Mailbox, MailItem } from '../channels/delivery';
import { luaScript } from './lua-script';
import { RedisLock } from './redis-lock';
import type { ProcessLiveness } from './process-liveness';

const DONE_TTL_SECONDS = 7 * 86_400;

/**
 * Adds an item to its chat's mailbox unless it is already waiting or was delivered, and lists the chat
 * among its channel's waiting ones. KEYS: done marker, item, mailbox, the channel's waiting chats.
 * ARGV: item JSON, TTL seconds, key, chat id.
 */
const ADD_TO_MAILBOX = `
if redis.call('exists', KEYS[1]) == 1 then return 0 end
if redis.call('set', KEYS[2], ARGV[1], 'EX', ARGV[2], 'NX') then
  redis.call('rpush', KEYS[3], ARGV[3])
  redis.call('sadd', KEYS[4], ARGV[4])
  return 1
end
return 0`;

/**
 * The oldest item of a mailbox (KEYS[1] in the scripts below; ARGV[1] the key prefix `<prefix>:outbound:`):
 * {} when empty, else {key, item JSON ('' when gone), back-off ms left, {sent flag per part}}. Its other
 * keys are named after the item's key, so they are not among KEYS: Muninn's Redis is one node.
 */
const HEAD = `
local function head(mailbox, p)
  local key = redis.call('lindex', mailbox, 0)
  if not key then return {} end
  local raw = redis.call('get', p .. 'item:' .. key)
  local parts = 0
  if raw then
    local item = cjson.decode(raw)
    if type(item.voice) == 'table' then parts = 1 elseif type(item.chunks) == 'table' then parts = #item.chunks end
  end
  local sent = {}
  for i = 0, parts - 1 do sent[#sent + 1] = redis.call('exists', p .. 'sent:' .. key .. ':' .. i) end
  return {key, raw or '', redis.call('pttl', p .. 'retry:' .. key), sent}
end
`;

/** Takes the chat's lock (KEYS[2]) and reads the head. ARGV: prefix, token, ttl ms. Returns nil when held. */
const CLAIM = `${HEAD}
if not redis.call('set', KEYS[2], ARGV[2], 'PX', ARGV[3], 'NX') then return false end
return {head(KEYS[1], ARGV[1])}`;

/** Reads the head. ARGV: prefix. */
const READ_HEAD = `${HEAD}
return {head(KEYS[1], ARGV[1])}`;

/**
 * Takes item ARGV[2] off (done, its state dropped), marks its part ARGV[4] sent (unless ''), unlists the
 * chat (KEYS[2]: its channel's waiting chats; ARGV[5] the chat id) once the mailbox is empty, and reads
 * the next head. ARGV: prefix, key, TTL seconds, part, chat id.
 */
const FINISH = `${HEAD}
local p, key = ARGV[1], ARGV[2]
if ARGV[4] ~= '' then redis.call('set', p .. 'sent:' .. key .. ':' .. ARGV[4], '1', 'EX', ARGV[3]) end
redis.call('set', p .. 'done:' .. key, '1', 'EX', ARGV[3])
redis.call('del', p .. 'item:' .. key, p .. 'failures:' .. key, p .. 'retry:' .. key)
redis.call('lrem', KEYS[1], 1, key)
if redis.call('llen', KEYS[1]) == 0 then redis.call('srem', KEYS[2], ARGV[5]) end
return {head(KEYS[1], p)}`;

/**
 * ADD_TO_MAILBOX, then CLAIM: KEYS: done marker, item, mailbox, waiting chats, lock. ARGV: item JSON, TTL
 * seconds, key, chat id, prefix, token, lock ttl ms. Returns {added} when the lock is held, else {added, head}.
 */
const ADD_AND_CLAIM = `${HEAD}
local added = 0
if redis.call('exists', KEYS[1]) == 0 and redis.call('set', KEYS[2], ARGV[1], 'EX', ARGV[2], 'NX') then
  redis.call('rpush', KEYS[3], ARGV[3])
  redis.call('sadd', KEYS[4], ARGV[4])
  added = 1
end
if not redis.call('set', KEYS[5], ARGV[6], 'PX', ARGV[7], 'NX') then return {added} end
return {added, head(KEYS[3], ARGV[5])}`;

const addToMailbox = luaScript('mailbox_add', 4, ADD_TO_MAILBOX);
const addAndClaimMailbox = luaScript('mailbox_add_claim', 5, ADD_AND_CLAIM);
const claimMailbox = luaScript('mailbox_claim', 2, CLAIM);
const readHead = luaScript('mailbox_head', 1, READ_HEAD);
const finishItem = luaScript('mailbox_finish', 2, FINISH);

type HeadReply = [] | [string, string, number, number[]];

/** The outbound mailboxes in Redis: a list of keys per chat, each item's chunks, sent marks, back-offs. */
export class RedisMailbox implements Mailbox {
  private readonly locks: RedisLock;
  private readonly p: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    lockMs: number,
    liveness?: ProcessLiveness,
  ) {
    this.locks = new RedisLock(redis, lockMs, liveness);
    this.p = `${prefix}:outbound:`;
  }

  private k(kind: 'item' | 'done' | 'failures' | 'retry', key: string): string {
    return `${this.p}${kind}:${key}`;
  }

  private mailboxKey(chat: MailChat): string {
    return `${this.p}mailbox:${chat.channel}:${chat.chatId}`;
  }

  private waitingKey(channel: string): string {
    return `${this.p}waiting:${channel}`;
  }

  async add(chat: MailChat, item: MailItem): Promise<boolean> {
    const added = await addToMailbox(
      this.redis,
      [this.k('done', item.key), this.k('item', item.key), this.mailboxKey(chat), this.waitingKey(chat.channel)],
      [itemJson(item), String(DONE_TTL_SECONDS), item.key, chat.chatId],
    );
    return added === 1;
  }

  claim(chat: MailChat): Promise<MailClaim | null> {
    return this.claimWith(chat, async (lockKey, token, ttlMs) => {
      const reply = (await claimMailbox(this.redis, [this.mailboxKey(chat), lockKey], [this.p, token, ttlMs])) as [HeadReply] | null;
      return reply ? reply[0] : null;
    });
  }

  async addAndClaim(chat: MailChat, item: MailItem): Promise<{ added: boolean; claimed: MailClaim | null }> {
    let added = false;
    const claimed = await this.claimWith(chat, async (lockKey, token, ttlMs) => {
      const reply = (await addAndClaimMailbox(
        this.redis,
        [this.k('done', item.key), this.k('item', item.key), this.mailboxKey(chat), this.waitingKey(chat.channel), lockKey],
        [itemJson(item), String(DONE_TTL_SECONDS), item.key, chat.chatId, this.p, token, ttlMs],
      )) as [number] | [number, HeadReply];
      added = reply[0] === 1;
      return reply.length === 2 ? reply[1] : null;
    });
    return { added, claimed };
  }

  /** Takes the chat's lock with `take` (a script that also reads the head; null when the lock is held). */
  private async claimWith(chat: MailChat, take: (lockKey: string, token: string, ttlMs: number) => Promise<HeadReply | null>): Promise<MailClaim | null> {
    const lockKey = `${this.p}lock:${chat.channel}:${chat.chatId}`;
    const claimed = await this.locks.tryAcquireWith(lockKey, (token, ttlMs) => take(lockKey, token, ttlMs));
    if (!claimed) return null;
    // Taken over from a dead holder: the head was not read with the lock.
    const head = claimed.value ?? ((await readHead(this.redis, [this.mailboxKey(chat)], [this.p])) as [HeadReply])[0];
    return { lock: claimed.lock, head: toHead(head) };
  }

  async markSent(key: string, index: number): Promise<void> {
    await this.redis.set(`${this.p}sent:${key}:${index}`, '1', 'EX', DONE_TTL_SECONDS);
  }

  async finish(chat: MailChat, key: string, sentIndex?: number): Promise<MailHead | null> {
    const reply = (await finishItem(
      this.redis,
      [this.mailboxKey(chat), this.waitingKey(chat.channel)],
      [this.p, key, String(DONE_TTL_SECONDS), sentIndex === undefined ? '' : String(sentIndex), chat.chatId],
    )) as [HeadReply];
    return toHead(reply[0]);
  }

  async countFailure(key: string): Promise<number> {
    const replies = await this.redis.multi().incr(this.k('failures', key)).expire(this.k('failures', key), DONE_TTL_SECONDS).exec();
    const [err, failures] = replies?.[0] ?? [new Error('countFailure: the transaction was discarded'), 0];
    if (err) throw err;
    return Number(failures);
  }

  async setBackoff(key: string, ms: number): Promise<void> {
    await this.redis.set(this.k('retry', key), '1', 'PX', ms);
  }

  waitingChats(channel: string): Promise<string[]> {
    return this.redis.smembers(this.waitingKey(channel));
  }
}

function itemJson(item: MailItem): string {
  return JSON.stringify({ chunks: item.chunks, ...(item.stream ? { stream: item.stream } : {}), ...(item.voice ? { voice: item.voice } : {}) });
}

function toHead(reply: HeadReply): MailHead | null {
  if (reply.length === 0) return null;
  const [key, raw, pttl, sent] = reply;
  const stored = raw ? (JSON.parse(raw) as Omit<MailItem, 'key'>) : { chunks: [] };
  return {
    key,
    chunks: stored.chunks,
    ...(stored.stream ? { stream: stored.stream } : {}),
    ...(stored.voice ? { voice: stored.voice } : {}),
    sent: sent.map((n) => n === 1),
    backoffMs: Math.max(0, pttl),
  };
}
