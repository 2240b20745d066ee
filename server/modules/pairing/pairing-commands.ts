import type { Ctx } from '../../common/ctx';
import { NotFoundError, UserInputError } from '../../common/errors';
import { parseTrustLevel, TRUST_ORDER, TrustLevel } from '../../common/trust';
import type { CommandResult, SlashCommandService } from '../commands';
import type { Session } from '../sessions';
import { CHANNELS, type User, type UserService } from '../users';
import { looksLikePairingCode } from './pairing-code';
import type { PairingService } from './pairing.service';

/** What the chat commands of this module need. */
export interface PairingCommandDeps {
  pairing: PairingService;
  users: UserService;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const APPROVE_WORDS = new Set(['approve', 'allow', 'allow_once', 'yes']);
const DENY_WORDS = new Set(['deny', 'reject', 'no']);

/**
 * Adds the admission commands of DESIGN §4 for ADMINs and above:
 * - `/approve CODE [deny]` — decides a pairing request. It only claims arguments that read as a pairing
 *   code (8 characters, no 0/O/1/I) and returns null otherwise, so `/approve <approval-id> <decision>`
 *   still reaches the tool approvals.
 * - `/trust <userId | channel:handle | handle> <LEVEL>` — sets a user's trust within the limits of
 *   DESIGN §3 (an ADMIN grants up to TRUSTED and never touches ADMINs or OWNERs); a bare handle is looked
 *   up on the channel of the chat the command came from.
 */
export function registerPairingCommands(commands: SlashCommandService, deps: PairingCommandDeps): void {
  commands.extend({
    names: ['approve'],
    minTrust: TrustLevel.ADMIN,
    help: '/approve <CODE> [deny] — let a pairing request in (or turn it down)',
    run: (ctx, _session, args) => approvePairing(ctx, deps.pairing, args),
  });
  commands.extend({
    names: ['trust'],
    minTrust: TrustLevel.ADMIN,
    help: `/trust <user> <LEVEL> — set a user's trust (${TRUST_ORDER.join(', ')})`,
    run: (ctx, session, args) => setTrust(ctx, deps.users, session, args),
  });
}

async function approvePairing(ctx: Ctx, pairing: PairingService, args: string[]): Promise<CommandResult | null> {
  const [code, word] = args;
  if (!code || !looksLikePairingCode(code) || args.length > 2) return null;
  const verb = (word ?? 'approve').toLowerCase();
  if (DENY_WORDS.has(verb)) {
    const request = await pairing.deny(ctx, code);
    return { reply: `Denied pairing ${request.code} (${request.channel}:${request.handle}).` };
  }
  if (!APPROVE_WORDS.has(verb)) return { reply: 'Usage: /approve <CODE> to let a pairing request in, /approve <CODE> deny to turn it down.' };
  const { request, user, created } = await pairing.approve(ctx, code);
  const who = `${user.displayName} (${request.channel}:${request.handle})`;
  return {
    reply: created
      ? `Approved pairing ${request.code}: ${who} is now a ${user.trust} user (${user.id}); I am letting them know.`
      : `Approved pairing ${request.code}: ${who} is linked to the existing user ${user.id} (${user.trust}); I am letting them know.`,
  };
}

async function setTrust(ctx: Ctx, users: UserService, session: Session, args: string[]): Promise<CommandResult> {
  const [target, levelText] = args;
  if (!target || !levelText || args.length > 2) return { reply: `Usage: /trust <userId | channel:handle | handle> <${TRUST_ORDER.join(' | ')}>` };
  const level = parseTrustLevel(levelText);
  if (!level) throw new UserInputError(`"${levelText}" is not a trust level; use one of ${TRUST_ORDER.join(', ')}.`, 'level');
  const user = await findTarget(ctx, users, session, target);
  const previous = user.trust;
  const updated = await users.setTrust(ctx, user.id, level);
  const change = previous === updated.trust ? `stays ${updated.trust}` : `${previous} → ${updated.trust}`;
  return { reply: `${updated.displayName} (${updated.id}): ${change}.` };
}

/** A user by id, by `channel:handle`, or by a handle on the session's channel. */
async function findTarget(ctx: Ctx, users: UserService, session: Session, target: string): Promise<User> {
  if (UUID.test(target)) return users.get(ctx, target);
  const colon = target.indexOf(':');
  const prefix = colon > 0 ? target.slice(0, colon) : '';
  const [channel, handle] = (CHANNELS as readonly string[]).includes(prefix) ? [prefix, target.slice(colon + 1)] : [session.channel, target];
  const user = await users.findByIdentity(ctx, channel, handle);
  if (!user) throw new NotFoundError('User with identity', `${channel}:${handle}`);
  return user;
}
