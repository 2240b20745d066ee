import { Column, Entity, Index } from 'typeorm';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { BaseRecord } from '../../persistence/base.entity';

export enum ToolApprovalStatus {
  PENDING = 'PENDING',
  ALLOWED_ONCE = 'ALLOWED_ONCE',
  ALLOWED_ALWAYS = 'ALLOWED_ALWAYS',
  DENIED = 'DENIED',
  EXPIRED = 'EXPIRED',
}
registerEnumType(ToolApprovalStatus, { name: 'ToolApprovalStatus' });

/** A paused tool call waiting for an OWNER or ADMIN to decide. */
@ObjectType()
@Entity('tool_approvals')
@Index(['status', 'createdAt'])
export class ToolApproval extends BaseRecord {
  @Field()
  @Index()
  @Column({ type: 'varchar', length: 36 })
  sessionId!: string;

  /** The user whose turn asked for the tool. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  tool!: string;

  @Field(() => GraphQLJSON)
  @Column({ type: 'simple-json' })
  args!: unknown;

  @Field(() => ToolApprovalStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: ToolApprovalStatus;

  @Field()
  @Column({ type: Date })
  expiresAt!: Date;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  decidedAt!: Date | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  decidedBy!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  turnId!: string | null;
}
