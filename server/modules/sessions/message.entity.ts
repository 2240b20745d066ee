import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, Int, ObjectType } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { BaseRecord } from '../../persistence/base.entity';
import { Session } from './session.entity';
import { MessageRole, MessageStatus } from './session.types';

/** A message of a session: user input, assistant reply, tool result or system notice. */
@ObjectType()
@Entity('messages')
@Index(['sessionId', 'id'])
// Only the messages waiting for an answer (a handful): the sweep for sessions nobody drains reads these.
@Index('IDX_messages_pending', ['updatedAt'], { where: `"status" IN ('QUEUED', 'PROCESSING')` })
export class Message extends BaseRecord {
  @Field()
  @Column({ type: 'varchar', length: 36 })
  sessionId!: string;

  @ManyToOne(() => Session, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'sessionId' })
  session?: Relation<Session>;

  /** Sender for user messages; null for assistant, tool and system messages. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @Field(() => MessageRole)
  @Column({ type: 'varchar', length: 16 })
  role!: MessageRole;

  @Field()
  @Column({ type: 'text' })
  content!: string;

  @Field(() => MessageStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: MessageStatus;

  /** Channel and platform message id, unique, so a redelivered platform event is stored once. */
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 300, nullable: true })
  dedupeKey!: string | null;

  /** The inbound message this one answers (assistant and tool messages). */
  @Field(() => String, { nullable: true })
  @Index()
  @Column({ type: 'varchar', length: 36, nullable: true })
  replyToId!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  turnId!: string | null;

  /** Tool calls requested by the assistant, or the call this tool message answers. */
  @Field(() => GraphQLJSON, { nullable: true })
  @Column({ type: 'simple-json', nullable: true })
  toolCalls!: unknown;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 100, nullable: true })
  toolCallId!: string | null;

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

  /** Length in seconds of the voice note this user message was transcribed from; null for typed text. */
  @Field(() => Int, {
    nullable: true,
    description: 'Seconds of the voice note this message is the transcript of; null for typed text.',
  })
  @Column({ type: 'integer', nullable: true })
  voiceSeconds!: number | null;

  /** True when token counts were estimated rather than reported by the provider. */
  @Field()
  @Column({ type: 'boolean', default: false })
  usageEstimated!: boolean;

  /** Not stored: set when the message is read for its turn, whether it has images (undefined: not known). */
  hasImages?: boolean;
}
