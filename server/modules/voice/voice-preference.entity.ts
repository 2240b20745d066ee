import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';

/** Spoken replies for one user: `never`, `when_voice` or `always` (`/voice off|auto|on`); overrides `voice.reply`. */
export type VoiceReplyMode = 'never' | 'when_voice' | 'always';

/** A user's own choice of spoken replies (`/voice on|off|auto`); users without a row follow `voice.reply`. */
@Entity('voice_preferences')
export class VoicePreference extends BaseRecord {
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 16 })
  reply!: VoiceReplyMode;
}
