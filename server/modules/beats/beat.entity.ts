import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';

/** A cron-scheduled agent run; `managed` when it comes from heartbeats.default.json. */
@ObjectType()
@Entity('beats')
export class Beat extends BaseRecord {
  @Field()
  @Index()
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  cron!: string;

  @Field()
  @Column({ type: 'varchar', length: 64, default: 'UTC' })
  timezone!: string;

  @Field()
  @Column({ type: 'text' })
  prompt!: string;

  @Field(() => String, { nullable: true })
  @Index()
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User> | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 32, nullable: true })
  targetChannel!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  targetChatId!: string | null;

  @Field()
  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  @Field()
  @Column({ type: 'boolean', default: false })
  managed!: boolean;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  lastRunAt!: Date | null;
}
