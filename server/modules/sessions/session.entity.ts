import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';
import { ChatKind, SessionStatus } from './session.types';

/** One running conversation, addressed by its key; rotated by /new, /compact and resets. */
@ObjectType()
@Entity('sessions')
@Index(['key', 'status'])
export class Session extends BaseRecord {
  @Field()
  @Column({ type: 'varchar', length: 300 })
  key!: string;

  /** The user the session belongs to; null for group sessions. */
  @Field(() => String, { nullable: true })
  @Index()
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User> | null;

  @Field()
  @Column({ type: 'varchar', length: 32 })
  channel!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  chatId!: string | null;

  @Field(() => ChatKind)
  @Column({ type: 'varchar', length: 8 })
  chatKind!: ChatKind;

  @Field(() => SessionStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: SessionStatus;

  @Field()
  @Column({ type: Date })
  startedAt!: Date;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  endedAt!: Date | null;

  @Field()
  @Index()
  @Column({ type: Date })
  lastActivityAt!: Date;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  previousSessionId!: string | null;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  messageCount!: number;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  inputTokens!: number;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  outputTokens!: number;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  cacheReadTokens!: number;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  cacheWriteTokens!: number;
}
