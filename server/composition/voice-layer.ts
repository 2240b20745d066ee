import path from 'node:path';
import type { Redis } from 'ioredis';
import type { AppConfig } from '../config';
import type { Logger } from '../common/logger';
import type { SecretRedactor } from '../common/secret-redactor';
import type { Db } from '../persistence/db';
import type { DeliveryService } from '../channels/delivery';
import type { ChannelRegistry } from '../channels/channel-registry';
import type { OutboundSender } from '../modules/agent';
import type { SlashCommandService } from '../modules/commands';
import type { TurnService } from '../modules/conversation';
import { audioRoutesFromConfig } from '../modules/models';
import type { SessionLifecycleService } from '../modules/sessions';
import type { UsageService } from '../modules/usage';
import { FfmpegConverter, registerVoiceCommands, VoiceNoteService, VoicePreferences, VoiceReplyService } from '../modules/voice';
import { RedisAudioStash } from '../redis/redis-audio-stash';
import type { QueueEnv } from '../../jobs/bull';
import { voiceJobs } from '../../jobs/voice';

export interface VoiceLayerDeps {
  config: AppConfig;
  logger: Logger;
  redactor: SecretRedactor;
  db: Db;
  redis: Redis;
  queueEnv: QueueEnv;
  /** The text path of replies, which spoken replies sit in front of. */
  inner: OutboundSender;
  delivery: DeliveryService;
  channels: ChannelRegistry;
  turns: TurnService;
  lifecycle: SessionLifecycleService;
  usage: UsageService;
}

/** Voice notes in and out: the `transcribe` and `speech` roles, the `voice` queue, `/voice`. */
export interface VoiceLayer {
  notes: VoiceNoteService;
  /** The agent's outbound port: replies, spoken when they should be. */
  replies: VoiceReplyService;
  converter: FfmpegConverter;
  registerCommands(commands: SlashCommandService): void;
  close(): Promise<void>;
}

export function createVoiceLayer(deps: VoiceLayerDeps): VoiceLayer {
  const { config } = deps;
  const logger = deps.logger.child({ module: 'voice' });
  const audio = audioRoutesFromConfig(config, { redactor: deps.redactor, logger });
  const jobs = voiceJobs(deps.queueEnv, config.voice.attempts);
  const preferences = new VoicePreferences(deps.db);
  const converter = new FfmpegConverter(config.voice.ffmpeg, config.voice.timeout_ms);
  const voice = () => config.voice;
  const notes = new VoiceNoteService({
    db: deps.db,
    transcriber: audio.transcriber,
    stash: new RedisAudioStash(deps.redis, config.redis.prefix),
    jobs,
    turns: deps.turns,
    lifecycle: deps.lifecycle,
    notices: deps.delivery,
    presence: deps.channels,
    usage: deps.usage,
    config: voice,
    keepDir: path.join(config.data_dir, 'voice'),
  });
  const replies = new VoiceReplyService({
    db: deps.db,
    inner: deps.inner,
    speaker: audio.speaker,
    jobs,
    outbox: deps.delivery,
    preferences,
    converter,
    presence: deps.channels,
    usage: deps.usage,
    config: voice,
  });
  if (audio.transcriber || audio.speaker) {
    logger.info({ transcribe: audio.transcriber ? `${audio.transcriber.provider}/${audio.transcriber.model}` : null, speech: audio.speaker ? `${audio.speaker.provider}/${audio.speaker.model}` : null, reply: config.voice.reply }, 'voice roles');
  }
  return {
    notes,
    replies,
    converter,
    registerCommands: (commands) => registerVoiceCommands(commands, { preferences, config: voice, speechConfigured: audio.speaker !== null }),
    close: () => jobs.close(),
  };
}
