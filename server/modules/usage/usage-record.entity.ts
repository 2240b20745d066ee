import { Column, Entity, Index } from 'typeorm';
import { Field, Float, Int, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';

/** Tokens used by one model call. */
@ObjectType()
@Entity('usage')
@Index(['userId', 'createdAt'])
@Index(['sessionId'])
export class UsageRecord extends BaseRecord {
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  sessionId!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  messageId!: string | null;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  provider!: string;

  @Field()
  @Column({ type: 'varchar', length: 200 })
  model!: string;

  /** Agent role: main, summarizer, heartbeat, embeddings. */
  @Field()
  @Column({ type: 'varchar', length: 32 })
  role!: string;

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

  @Field()
  @Column({ type: 'boolean', default: false })
  estimated!: boolean;

  /** Seconds of audio transcribed (role `transcribe`) or spoken (role `speech`); 0 for chat calls. */
  @Field(() => Int, { description: 'Seconds of audio transcribed (role transcribe) or spoken (role speech).' })
  @Column({ type: 'integer', default: 0 })
  audioSeconds!: number;

  /** What the call cost in USD (provider-reported, else from the price table); null when the model has no price. */
  @Field(() => Float, { nullable: true })
  @Column({ type: 'float', nullable: true })
  costUsd!: number | null;
}
