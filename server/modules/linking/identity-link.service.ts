import { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { ForbiddenError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { AuditService } from '../audit';
import { generatePairingCode, normalizePairingCode } from '../pairing';
import type { UserService } from '../users';
import type { LinkCodeStore } from './link-code-store';

/** Channels whose handles a user may link to themselves with `/link CODE` (web and TUI sign in with tokens). */
export const SELF_LINK_CHANNELS = ['telegram', 'whatsapp'] as const satisfies readonly string[];

export interface IdentityLinkOptions {
  /** How long a code works. @default 600 */
  codeTtlSeconds?: number;
  /** Wrong codes a sender may send per window before `/link` stops answering with a check. @default 5 */
  maxFailures?: number;
  /** The window of `maxFailures`, in seconds. @default 900 */
  failureWindowSeconds?: number;
}

/** A code to send to the bot as `/link CODE`. */
export interface LinkCode {
  code: string;
  expiresAt: Date;
}

/** The sender of a `/link` message on a platform channel. */
export interface LinkRequest {
  channel: string;
  chatKind: 'dm' | 'group';
  handle: string;
  displayName?: string | null;
  text: string;
}

/**
 * Linking a channel identity by the user themselves (DESIGN §10, "Identity linking by the user"): the
 * console asks for a one-time code (8 characters of the pairing alphabet, 40 bits, 10 minutes, one per
 * user), the user sends `/link CODE` to the bot in a direct chat, and that Telegram or WhatsApp handle
 * becomes theirs, audited as `identity.self_link`. Wrong codes are counted per sender and refused after
 * `maxFailures` in a window, so codes cannot be guessed.
 */
export class IdentityLinkService {
  private readonly options: Required<IdentityLinkOptions>;

  constructor(
    private readonly deps: { users: UserService; audit: AuditService; store: LinkCodeStore; clock?: { now(): Date } },
    options: IdentityLinkOptions = {},
  ) {
    this.options = { codeTtlSeconds: options.codeTtlSeconds ?? 600, maxFailures: options.maxFailures ?? 5, failureWindowSeconds: options.failureWindowSeconds ?? 900 };
  }

  /** A new code for the signed-in user (MEMBER and above); their previous code stops working. */
  async createCode(ctx: Ctx): Promise<LinkCode> {
    access.requireTrust(ctx, TrustLevel.MEMBER, 'linking a channel');
    if (ctx.actor.kind !== 'user') throw new ForbiddenError('Only a signed-in user can link a channel to themselves.');
    const code = generatePairingCode();
    await this.deps.store.put(code, ctx.actor.userId, this.options.codeTtlSeconds);
    const now = this.deps.clock?.now() ?? new Date();
    return { code, expiresAt: new Date(now.getTime() + this.options.codeTtlSeconds * 1000) };
  }

  /** True when `text` is a `/link` command (with or without a code, and a Telegram `@bot` suffix). */
  matches(text: string): boolean {
    return /^\/link(?:@\w+)?(?:\s|$)/i.test(text.trim());
  }

  /**
   * Redeems `/link CODE` from a platform sender; returns the answer for the sender. `ctx` is the
   * pipeline's (anonymous or the sender's user); linking runs as the code's user.
   */
  async redeem(ctx: Ctx, req: LinkRequest): Promise<string> {
    if (!(SELF_LINK_CHANNELS as readonly string[]).includes(req.channel)) return 'Linking with /link works on Telegram and WhatsApp.';
    if (req.chatKind !== 'dm') return 'Send /link CODE to me in a direct chat, not in a group.';
    const sender = `${req.channel}:${req.handle}`;
    const typed = req.text.trim().replace(/^\/link(?:@\w+)?/i, '').trim();
    if (!typed) return 'Send /link followed by the code the Muninn console shows you (Account → Link a channel).';
    if ((await this.deps.store.failures(sender)) >= this.options.maxFailures) {
      return 'Too many wrong codes from this account; wait 15 minutes and try again with a fresh code.';
    }
    const code = normalizePairingCode(typed);
    const userId = code ? await this.deps.store.take(code) : null;
    if (!userId) {
      await this.deps.store.countFailure(sender, this.options.failureWindowSeconds);
      ctx.logger.info({ channel: req.channel }, 'link code refused');
      return 'This code is unknown or expired. Get a new one in the Muninn console (Account → Link a channel); it works once, for 10 minutes.';
    }
    const system = ctx.asSystem('self-link');
    const user = await this.deps.users.findOne(system, userId);
    if (!user || !trustAtLeast(user.trust, TrustLevel.MEMBER)) return 'This code belongs to an account that may not link channels.';
    const current = await this.deps.users.findByIdentity(system, req.channel, req.handle);
    if (current?.id === user.id) return `This ${req.channel} account is already linked to ${user.displayName}.`;
    if (current) return `This ${req.channel} account already belongs to another Muninn user; ask an admin to move it.`;
    const identity = await this.deps.users.linkIdentity(system, user.id, req.channel, req.handle, req.displayName ?? null);
    await this.deps.audit.record(
      new Ctx({ actor: { kind: 'user', userId: user.id, trust: user.trust }, logger: ctx.logger, channel: req.channel }),
      'identity.self_link',
      { type: 'User', id: user.id },
      { identity: identity.key },
    );
    return `Linked: this ${req.channel} account now belongs to ${user.displayName} (trust ${user.trust}). Messages from here count as yours.`;
  }
}
