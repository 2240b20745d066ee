import pino from 'pino';
import type { InboundMessage } from '../../../server/channels/channel.types';
import { ChannelSenderPolicy, type ChannelPolicyConfig } from '../../../server/channels/policies/channel-sender-policy';
import type { GuestVerdict } from '../../../server/channels/policies/guest-rate-limiter';
import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import type { PairingOutcome, PairingRequest, PairingService } from '../../../server/modules/pairing';
import type { User } from '../../../server/modules/users';
import type { Db } from '../../../server/persistence/db';
import type { UserService } from '../../../server/modules/users';

const logger = pino({ enabled: false });
const ctx = new Ctx({ actor: { kind: 'anonymous' }, logger });

const BASE: ChannelPolicyConfig = {
  dm_policy: 'pairing',
  allow_from: [],
  group_policy: 'allowlist',
  groups: [],
  require_mention: true,
  guest_messages_per_minute: 5,
};

function dm(handle: string, text = 'hi'): InboundMessage {
  return { channel: 'telegram', chatId: handle, chatKind: 'dm', sender: { handle, displayName: null }, text };
}

function group(chatId: string, handle: string, mentionsBot = true): InboundMessage {
  return { channel: 'telegram', chatId, chatKind: 'group', sender: { handle }, text: '@bot hi', mentionsBot };
}

function user(trust: TrustLevel): User {
  return { id: `user-${trust}`, displayName: trust, trust } as User;
}

/**
 * The decisions of ChannelSenderPolicy with fake collaborators: which senders are refused, silenced or
 * answered. Paths that create users run against a real database in tests/e2e/pairing.
 */
describe('ChannelSenderPolicy', () => {
  let outcomes: PairingOutcome[];
  let requests: Array<{ channel: string; handle: string }>;
  let verdicts: GuestVerdict[];
  let throttled: Set<string>;

  function policy(config: Partial<ChannelPolicyConfig> = {}): ChannelSenderPolicy {
    const pairing = {
      ttlMs: 3_600_000,
      request: async (_ctx: Ctx, input: { channel: string; handle: string }) => {
        requests.push(input);
        return outcomes.shift() ?? { kind: 'already-requested', request: {} as PairingRequest };
      },
    } as unknown as PairingService;
    const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('no users may be created here')) });
    return new ChannelSenderPolicy('telegram', { ...BASE, ...config }, {
      db: unused as Db,
      users: unused as UserService,
      pairing,
      guests: { check: async () => verdicts.shift() ?? 'ok' },
      throttle: {
        first: async (key) => {
          if (throttled.has(key)) return false;
          throttled.add(key);
          return true;
        },
      },
      logger,
    });
  }

  beforeEach(() => {
    outcomes = [];
    requests = [];
    verdicts = [];
    throttled = new Set();
  });

  describe('unknown DM senders', () => {
    it('pairing: a new code is sent with how to get approved; a repeat is silent; a full queue says "try later" once', async () => {
      outcomes.push(
        { kind: 'created', request: { code: 'K7QM2XPR' } as PairingRequest },
        { kind: 'already-requested', request: {} as PairingRequest },
        { kind: 'full', pending: 3 },
        { kind: 'full', pending: 3 },
      );
      const p = policy();
      const created = await p.admit(ctx, dm('1'));
      expect(created.user).toBeNull();
      expect(created.reply).toContain('Your pairing code is K7QM2XPR (valid for 60 minutes)');
      expect(created.reply).toContain('/approve K7QM2XPR');
      expect(created.reply).toContain('muninn pairing approve K7QM2XPR');
      expect(await p.admit(ctx, dm('1'))).toEqual({ user: null, reply: undefined });
      expect((await p.admit(ctx, dm('2'))).reply).toMatch(/too many people are waiting.*try again later/);
      expect(await p.admit(ctx, dm('2'))).toEqual({ user: null, reply: undefined });
      expect(requests).toEqual([
        { channel: 'telegram', handle: '1', displayName: null },
        { channel: 'telegram', handle: '1', displayName: null },
        { channel: 'telegram', handle: '2', displayName: null },
        { channel: 'telegram', handle: '2', displayName: null },
      ]);
    });

    it('disabled and allowlist (not listed) drop silently without asking for a code', async () => {
      expect(await policy({ dm_policy: 'disabled' }).admit(ctx, dm('1'))).toEqual({ user: null });
      expect(await policy({ dm_policy: 'allowlist', allow_from: ['telegram:2'] }).admit(ctx, dm('1'))).toEqual({ user: null });
      expect(requests).toEqual([]);
    });
  });

  describe('groups', () => {
    it('allowlist serves listed chats only (plain or channel-prefixed ids); open serves all; disabled none', () => {
      const allow = policy({ groups: ['-100', 'telegram:-200'] });
      expect([allow.servesGroup('-100'), allow.servesGroup('-200'), allow.servesGroup('-300')]).toEqual([true, true, false]);
      expect(policy({ group_policy: 'open' }).servesGroup('-300')).toBe(true);
      expect(policy({ group_policy: 'disabled', groups: ['-100'] }).servesGroup('-100')).toBe(false);
    });

    it('unknown senders are never paired from a group; outside served groups or without a mention nobody is created', async () => {
      const p = policy({ groups: ['-100'] });
      expect(await p.admit(ctx, group('-300', '1'))).toEqual({ user: null });
      expect(await p.admit(ctx, group('-100', '1', false))).toEqual({ user: null });
      expect(requests).toEqual([]);
    });

    it('known senders in a group that is not served are dropped silently, whatever their trust', async () => {
      const p = policy({ groups: ['-100'] });
      expect(await p.gate(ctx, group('-300', 'x'), user(TrustLevel.OWNER))).toBe('');
      expect(await p.gate(ctx, group('-100', 'x'), user(TrustLevel.MEMBER))).toBeNull();
    });
  });

  describe('known senders', () => {
    it('MEMBER and above pass in DMs under every policy, and are never rate-limited', async () => {
      verdicts.push('silent', 'silent', 'silent', 'silent');
      for (const dm_policy of ['pairing', 'open', 'allowlist', 'disabled'] as const) {
        expect(await policy({ dm_policy }).gate(ctx, dm('1'), user(TrustLevel.MEMBER))).toBeNull();
      }
      expect(verdicts).toHaveLength(4);
    });

    it('a GUEST in a DM is served only where strangers are: open, or listed under allowlist', async () => {
      const guest = user(TrustLevel.GUEST);
      expect(await policy({ dm_policy: 'open' }).gate(ctx, dm('1'), guest)).toBeNull();
      expect(await policy({ dm_policy: 'allowlist', allow_from: ['1'] }).gate(ctx, dm('1'), guest)).toBeNull();
      expect(await policy({ dm_policy: 'allowlist', allow_from: ['2'] }).gate(ctx, dm('1'), guest)).toBe('');
      expect(await policy({ dm_policy: 'disabled' }).gate(ctx, dm('1'), guest)).toBe('');
      outcomes.push({ kind: 'created', request: { code: 'K7QM2XPR' } as PairingRequest }, { kind: 'already-requested', request: {} as PairingRequest });
      expect(await policy().gate(ctx, dm('1'), guest)).toContain('Your pairing code is K7QM2XPR');
      expect(await policy().gate(ctx, dm('1'), guest)).toBe('');
    });

    it('GUEST rate limit: ok passes, the first refusal gets a polite notice, later ones are silent', async () => {
      const p = policy({ dm_policy: 'open', guest_messages_per_minute: 3 });
      verdicts.push('ok', 'notify', 'silent');
      const guest = user(TrustLevel.GUEST);
      expect(await p.gate(ctx, dm('1'), guest)).toBeNull();
      expect(await p.gate(ctx, dm('1'), guest)).toBe('⏳ You are sending messages faster than I can answer guests (3 a minute). Please wait a minute and try again.');
      expect(await p.gate(ctx, dm('1'), guest)).toBe('');
    });
  });
});
