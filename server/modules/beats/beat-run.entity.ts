import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { Beat } from './beat.entity';
import { BeatRunStatus, BeatTrigger } from './beat.types';

/** One run of a beat; `tick` makes a scheduled tick run once, whichever worker takes it. */
@ObjectType({ description: 'One run of a beat: status, duration, result or error, tokens.' })
@Entity('beat_runs')
@Index(['beatId', 'tick'], { unique: true })
export class BeatRun extends BaseRecord {
  @Field()
  @Index()
  @Column({ type: 'varchar', length: 36 })
  beatId!: string;

  @ManyToOne(() => Beat, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'beatId' })
  beat?: Relation<Beat>;

  /** The schedule's job id (one row per tick) or a random id for manual runs. */
  @Column({ type: 'varchar', length: 200 })
  tick!: string;

  @Field(() => BeatTrigger)
  @Column({ type: 'varchar', length: 16, default: BeatTrigger.SCHEDULE })
  trigger!: BeatTrigger;

  @Field(() => BeatRunStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: BeatRunStatus;

  @Field(() => String, { nullable: true, description: 'Session of a task run (cron:<beatId>).' })
  @Column({ type: 'varchar', length: 36, nullable: true })
  sessionId!: string | null;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  finishedAt!: Date | null;

  @Field(() => Int, { nullable: true })
  @Column({ type: 'integer', nullable: true })
  durationMs!: number | null;

  @Field(() => String, { nullable: true, description: 'What was delivered.' })
  @Column({ type: 'text', nullable: true })
  output!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  error!: string | null;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  inputTokens!: number;

  @Field(() => Int)
  @Column({ type: 'integer', default: 0 })
  outputTokens!: number;
}
