import { Column, Entity, Index } from 'typeorm';
import { BaseRecord } from '../../persistence/base.entity';

/**
 * A platform channel set up from the console (`setTelegramBot`, `enableWhatsApp`): its settings as JSON,
 * sealed with the SecretBox since they carry the bot token. A row wins over the config file's settings
 * of the same channel; every change bumps `revision`, which tells each process to rebuild the transport.
 */
@Entity('channel_setups')
export class ChannelSetup extends BaseRecord {
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 32 })
  channel!: string;

  /** `v1:…`: the settings as JSON, sealed. */
  @Column({ type: 'text' })
  sealed!: string;

  /** Bumped by every change; with the row id it names the settings a process has applied. */
  @Column({ type: 'integer', default: 1 })
  revision!: number;

  /** What may be shown about the settings (the bot's @username), never a secret. */
  @Column({ type: 'varchar', length: 100, nullable: true })
  label!: string | null;

  @Column({ type: 'varchar', length: 36, nullable: true })
  updatedById!: string | null;
}
