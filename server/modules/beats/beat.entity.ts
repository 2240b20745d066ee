import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';
import { BeatKind } from './beat.types';

/**
 * A scheduled run (DESIGN §6): a reminder delivered as is or a task the agent runs, on a cron schedule in
 * a time zone or once at `at`; `managed` when it comes from heartbeats.default.json.
 */
@ObjectType({ description: 'A scheduled reminder or agent task (a "beat").' })
@Entity('beats')
export class Beat extends BaseRecord {
  @Field({ description: 'Unique per owner; managed beats carry the name of their entry in heartbeats.default.json.' })
  @Index()
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Field(() => BeatKind)
  @Column({ type: 'varchar', length: 16, default: BeatKind.TASK })
  kind!: BeatKind;

  @Field(() => String, { nullable: true, description: 'Cron expression (5 fields, or 6 with seconds first); null for a one-shot beat.' })
  @Column({ type: 'varchar', length: 100, nullable: true })
  cron!: string | null;

  @Field({ description: 'IANA time zone the cron expression is read in.' })
  @Column({ type: 'varchar', length: 64, default: 'UTC' })
  timezone!: string;

  @Field(() => Date, { nullable: true, description: 'One-shot time (instead of cron).' })
  @Column({ type: Date, nullable: true })
  at!: Date | null;

  @Field({ name: 'text', description: 'The reminder text, or the instruction of a task.' })
  @Column({ type: 'text' })
  prompt!: string;

  @Field(() => String, { nullable: true, description: 'Owner; the task runs with their trust at run time.' })
  @Index()
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User> | null;

  @Field(() => String, { nullable: true, description: "Channel of the target chat; null delivers to the owner's principal chat." })
  @Column({ type: 'varchar', length: 32, nullable: true })
  targetChannel!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  targetChatId!: string | null;

  @Field()
  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  @Field({ description: 'Comes from heartbeats.default.json and is kept in sync with it.' })
  @Column({ type: 'boolean', default: false })
  managed!: boolean;

  @Field(() => Int, { description: 'Failed runs in a row; at beats.max_failures the beat is disabled.' })
  @Column({ type: 'integer', default: 0 })
  consecutiveFailures!: number;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  lastRunAt!: Date | null;

  @Field(() => Date, { nullable: true, description: 'Next scheduled run; null when disabled or done.' })
  @Column({ type: Date, nullable: true })
  nextRunAt!: Date | null;
}
