import { Ctx } from '../../common/ctx';
import type { Logger } from '../../common/logger';
import { assertNever } from '../../common/assert-never';
import { TrustLevel } from '../../common/trust';
import type { Db } from '../../persistence/db';
import type { PairingService } from '../../modules/pairing';
import type { User, UserService } from '../../modules/users';
import type { InboundMessage } from '../channel.types';
import type { SenderPolicy } from '../inbound-pipeline';
import type { GuestLimiter } from './guest-rate-limiter';
import type { ReplyThrottle } from './reply-throttle';

/** The keys of `channels.<name>` this policy reads (DESIGN §3). */
export interface ChannelPolicyConfig {
  dm_policy: 'pairing' | 'open' | 'allowlist' | 'disabled';
  /** Platform ids (`12345` or `telegram:12345`) let into DMs under `allowlist`. */
  allow_from: readonly string[];
  group_policy: 'allowlist' | 'open' | 'disabled';
  /** Group chat ids served under `group_policy: allowlist`. */
  groups: readonly string[];
  require_mention: boolean;
  guest_messages_per_minute: number;
}

export interface ChannelSenderPolicyDeps {
  db: Db;
  users: UserService;
  pairing: PairingService;
  guests: GuestLimiter;
  throttle: ReplyThrottle;
  logger: Logger;
}

const HOUR = 3_600_000;

/** Refusal that drops a message without a reply (see `SenderPolicy.gate`). */
const SILENT = '';

/**
 * Who may talk to Muninn on one platform channel (DESIGN §3).
 *
 * Unknown senders (`admit`):
 * - DMs follow `dm_policy`: `pairing` issues a pairing code (the message itself is not processed;
 *   a sender who already got a code within the hour gets no answer; a full queue is answered "try
 *   later" once an hour), `open` makes the sender a GUEST, `allowlist` makes senders listed in
 *   `allow_from` MEMBERs and drops everyone else silently, `disabled` drops every unknown sender.
 * - Groups never pair. In a group the policy serves (`open`, or `allowlist` with the chat listed in
 *   `groups`), an unknown sender who addresses the bot (mention or reply, when `require_mention`) becomes
 *   a GUEST; chatter that does not address the bot creates nobody.
 *
 * Known senders (`gate`, after BLOCKED is dropped):
 * - A group the policy does not serve is ignored silently, whoever writes (the chat id is logged once,
 *   so an admin can add it to `groups`).
 * - GUEST is the level of strangers, so in DMs a GUEST is served only where a stranger would be: under
 *   `open`, or when listed in `allow_from`; under `pairing` a GUEST gets a pairing code like an unknown
 *   sender (approval raises them to MEMBER), under `disabled` (or `allowlist` when not listed) nothing.
 *   This keeps someone who became a GUEST in an open group from skipping pairing in DMs.
 * - GUESTs are rate-limited (`guest_messages_per_minute`, on Redis): the first message over the limit
 *   gets a polite notice, later ones in the same minute are dropped silently.
 */
export class ChannelSenderPolicy implements SenderPolicy {
  private readonly allowFrom: Set<string>;
  private readonly groups: Set<string>;
  private readonly loggedGroups = new Set<string>();

  constructor(
    readonly channel: string,
    private readonly config: ChannelPolicyConfig,
    private readonly deps: ChannelSenderPolicyDeps,
  ) {
    this.allowFrom = new Set(config.allow_from.map((id) => this.platformId(id)));
    this.groups = new Set(config.groups.map((id) => this.platformId(id)));
  }

  async admit(ctx: Ctx, message: InboundMessage): Promise<{ user: User | null; reply?: string }> {
    if (message.chatKind === 'group') {
      if (!this.servesGroup(message.chatId)) return { user: null };
      if (this.config.require_mention && !message.mentionsBot) return { user: null };
      return { user: await this.createUser(ctx, message, TrustLevel.GUEST) };
    }
    const policy = this.config.dm_policy;
    switch (policy) {
      case 'pairing':
        return { user: null, reply: await this.pair(ctx, message) };
      case 'open':
        return { user: await this.createUser(ctx, message, TrustLevel.GUEST) };
      case 'allowlist':
        return { user: this.allowFrom.has(message.sender.handle) ? await this.createUser(ctx, message, TrustLevel.MEMBER) : null };
      case 'disabled':
        return { user: null };
      default:
        return assertNever(policy);
    }
  }

  async gate(ctx: Ctx, message: InboundMessage, user: User): Promise<string | null> {
    if (message.chatKind === 'group') {
      if (!this.servesGroup(message.chatId)) return SILENT;
    } else if (user.trust === TrustLevel.GUEST) {
      const refusal = await this.gateGuestDm(ctx, message);
      if (refusal !== null) return refusal;
    }
    if (user.trust !== TrustLevel.GUEST) return null;
    const verdict = await this.deps.guests.check(user.id);
    switch (verdict) {
      case 'ok':
        return null;
      case 'notify':
        return `⏳ You are sending messages faster than I can answer guests (${this.config.guest_messages_per_minute} a minute). Please wait a minute and try again.`;
      case 'silent':
        return SILENT;
      default:
        return assertNever(verdict);
    }
  }

  /** Whether this channel serves the group chat `chatId`. */
  servesGroup(chatId: string): boolean {
    const policy = this.config.group_policy;
    switch (policy) {
      case 'open':
        return true;
      case 'disabled':
        return false;
      case 'allowlist': {
        const served = this.groups.has(chatId);
        if (!served && !this.loggedGroups.has(chatId) && this.loggedGroups.size < 1000) {
          this.loggedGroups.add(chatId);
          this.deps.logger.info(
            { channel: this.channel, chatId },
            `ignoring group ${chatId}: it is not in channels.${this.channel}.groups (group_policy: allowlist)`,
          );
        }
        return served;
      }
      default:
        return assertNever(policy);
    }
  }

  private async gateGuestDm(ctx: Ctx, message: InboundMessage): Promise<string | null> {
    const policy = this.config.dm_policy;
    switch (policy) {
      case 'open':
        return null;
      case 'allowlist':
        return this.allowFrom.has(message.sender.handle) ? null : SILENT;
      case 'disabled':
        return SILENT;
      case 'pairing':
        return (await this.pair(ctx, message)) ?? SILENT;
      default:
        return assertNever(policy);
    }
  }

  /** Asks for a pairing code; returns the text for the sender, or undefined to stay silent. */
  private async pair(ctx: Ctx, message: InboundMessage): Promise<string | undefined> {
    const { handle, displayName } = message.sender;
    if (message.chatId !== handle) {
      // The approval notice goes to the handle (see PairingService); for DMs both should be equal.
      this.deps.logger.warn({ channel: this.channel, chatId: message.chatId, handle }, 'DM chat id differs from the sender handle; the approval notice goes to the handle');
    }
    const outcome = await this.deps.pairing.request(ctx, { channel: this.channel, handle, displayName });
    switch (outcome.kind) {
      case 'created': {
        const { code } = outcome.request;
        const minutes = Math.round(this.deps.pairing.ttlMs / 60_000);
        return [
          `👋 Hi! I only talk to people an admin has let in. Your pairing code is ${code} (valid for ${minutes} minutes).`,
          `Send it to an admin of this assistant; they approve it with /approve ${code} in their chat, "muninn pairing approve ${code}" or in the admin UI. I will tell you when you are in.`,
        ].join('\n');
      }
      case 'already-requested':
        return undefined;
      case 'full':
        return (await this.deps.throttle.first(`pairing-full:${this.channel}:${handle}`, HOUR))
          ? '🙏 Sorry, too many people are waiting to be let in right now. Please try again later.'
          : undefined;
      default:
        return assertNever(outcome);
    }
  }

  /** A new user for the sender (as the system: the sender has no trust yet), or the one a concurrent first message made. */
  private createUser(ctx: Ctx, message: InboundMessage, trust: TrustLevel): Promise<User> {
    const system = new Ctx({
      actor: { kind: 'system', reason: `${this.channel} ${message.chatKind} policy` },
      logger: ctx.logger,
      requestId: ctx.requestId,
      channel: this.channel,
    });
    return this.deps.users.createFromSender(system, this.channel, message.sender, trust);
  }

  /** `telegram:12345` → `12345` on the telegram channel; other forms unchanged. */
  private platformId(id: string): string {
    const trimmed = id.trim();
    return trimmed.startsWith(`${this.channel}:`) ? trimmed.slice(this.channel.length + 1) : trimmed;
  }
}
