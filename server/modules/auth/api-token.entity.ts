import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';

/** An API token; only its SHA-256 hash is stored, the token itself is shown once. */
@ObjectType()
@Entity('api_tokens')
export class ApiToken extends BaseRecord {
  @Field()
  @Index()
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User>;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Index({ unique: true })
  @Column({ type: 'varchar', length: 64 })
  tokenHash!: string;

  /** First characters of the token, to tell tokens apart. */
  @Field()
  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  lastUsedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  revokedAt!: Date | null;
}
