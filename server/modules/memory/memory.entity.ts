import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, Float, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';
import { MemoryScope, MemoryType } from './memory.types';

/** A long-term note scoped to a user, a group or everyone. */
@ObjectType()
@Entity('memories')
@Index(['scope', 'userId'])
@Index(['scope', 'groupId'])
@Index(['userId', 'source'])
export class Memory extends BaseRecord {
  @Field(() => MemoryType)
  @Column({ type: 'varchar', length: 16 })
  type!: MemoryType;

  @Field(() => MemoryScope)
  @Column({ type: 'varchar', length: 16 })
  scope!: MemoryScope;

  /** Owner; set for user-scoped memories. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User> | null;

  /** Group chat key; set for group-scoped memories. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 300, nullable: true })
  groupId!: string | null;

  @Field()
  @Column({ type: 'text' })
  content!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  sourceSessionId!: string | null;

  @Field(() => Float)
  @Column({ type: 'float', default: 0.5 })
  importance!: number;

  /**
   * Where the memory comes from when it is not written directly: `workspace:<path>` for a chunk of a
   * workspace file (replaced whenever the file is re-indexed; edit the file, not the memory).
   */
  @Field(() => String, { nullable: true, description: 'workspace:<path> for chunks of workspace files (edit the file instead); null otherwise.' })
  @Column({ type: 'varchar', length: 300, nullable: true })
  source!: string | null;
}
