import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { Beat } from './beat.entity';

/** One run of a beat. */
@ObjectType()
@Entity('beat_runs')
export class BeatRun extends BaseRecord {
  @Field()
  @Index()
  @Column({ type: 'varchar', length: 36 })
  beatId!: string;

  @ManyToOne(() => Beat, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'beatId' })
  beat?: Relation<Beat>;

  @Field()
  @Column({ type: 'varchar', length: 16 })
  status!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  sessionId!: string | null;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  finishedAt!: Date | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  output!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  error!: string | null;
}
