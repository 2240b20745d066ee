import { Column, Entity, Index } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { BaseRecord } from '../../persistence/base.entity';

/** One privileged action or refusal: who did what to what. Never contains secrets. */
@ObjectType()
@Entity('audit_log')
@Index(['action', 'createdAt'])
export class AuditEntry extends BaseRecord {
  /** Acting user; null for the system. */
  @Field(() => String, { nullable: true })
  @Index()
  @Column({ type: 'varchar', length: 36, nullable: true })
  actorUserId!: string | null;

  /** `user`, `system` or `anonymous`, with a reason for the system. */
  @Field()
  @Column({ type: 'varchar', length: 100 })
  actor!: string;

  /** Dotted action name, e.g. `user.trust.set`, `token.create`, `tool.refused`. */
  @Field()
  @Column({ type: 'varchar', length: 100 })
  action!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 50, nullable: true })
  targetType!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 300, nullable: true })
  targetId!: string | null;

  @Field(() => GraphQLJSON, { nullable: true })
  @Column({ type: 'simple-json', nullable: true })
  details!: Record<string, unknown> | null;
}
