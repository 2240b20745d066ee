import type { Redis } from 'ioredis';
import type { AppConfig } from '../config';
import type { Clock } from '../common/clock';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import { ChannelDirectReplier } from '../channels/direct-replier';
import { InboundPipeline, REFUSE_UNKNOWN, type Deduper, type SelfLinker, type SenderPolicy } from '../channels/inbound-pipeline';
import type { SlashCommandService } from '../modules/commands';
import type { SessionRotation, TurnService } from '../modules/conversation';
import type { NoticeSender, SessionEventPublisher } from '../modules/events';
import type { PairingService } from '../modules/pairing';
import { SessionExpiryService, type SessionLifecycleService } from '../modules/sessions';
import type { UserService } from '../modules/users';
import type { VoiceNoteService } from '../modules/voice';
import type { DocumentInbox } from '../modules/documents';
import { createSenderPolicies } from './sender-policies';

export interface InboundLayerDeps {
  config: AppConfig;
  logger: Logger;
  db: Db;
  redis: Redis;
  users: UserService;
  pairing: PairingService;
  lifecycle: SessionLifecycleService;
  rotation: SessionRotation;
  turns: TurnService;
  commands: SlashCommandService;
  events: SessionEventPublisher;
  notices: NoticeSender;
  clock: Clock;
  /** `/link CODE` from Telegram and WhatsApp senders. */
  linker?: SelfLinker;
  /** Voice notes; refused with a message when omitted. */
  voice?: VoiceNoteService;
  /** Documents sent in chats; refused with a message when omitted. */
  documents?: DocumentInbox;
}

/** The inbound pipeline every channel feeds (DESIGN §2.2), with the unknown-sender policy of each channel. */
export function createInboundPipeline(deps: InboundLayerDeps): { pipeline: InboundPipeline; policies: Map<string, SenderPolicy> } {
  const { config, redis, lifecycle } = deps;
  const prefix = config.redis.prefix;
  const policies = createSenderPolicies({ config, logger: deps.logger, db: deps.db, users: deps.users, redis, pairing: deps.pairing });
  const dedupe: Deduper = { seen: async (key) => (await redis.set(`${prefix}:dedupe:${key}`, '1', 'EX', 86_400, 'NX')) !== 'OK' };
  const pipeline = new InboundPipeline({
    dedupe,
    users: deps.users,
    lifecycle,
    turns: deps.turns,
    commands: deps.commands,
    events: deps.events,
    policy: (channel) => policies.get(channel) ?? REFUSE_UNKNOWN,
    requireMention: (channel) =>
      (config.channels as unknown as Record<string, { require_mention?: boolean } | undefined>)[channel]
        ?.require_mention ?? true,
    dmScope: () => config.session.dm_scope,
    replier: new ChannelDirectReplier(deps.notices),
    logger: deps.logger.child({ module: 'inbound' }),
    linker: deps.linker,
    voice: deps.voice,
    documents: deps.documents,
    expiry: new SessionExpiryService(deps.rotation, () => ({ dailyResetHour: config.session.daily_reset_hour, timeZone: config.session.reset_timezone, idleMinutes: config.session.idle_minutes }), deps.clock),
  });
  return { pipeline, policies };
}
