import { Column, Entity, Index } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { TrustLevel } from '../../common/trust';

/** A person known to the server, with one trust level and any number of channel identities. */
@ObjectType()
@Entity('users')
export class User extends BaseRecord {
  @Field()
  @Column({ type: 'varchar', length: 200 })
  displayName!: string;

  @Field(() => TrustLevel)
  @Index()
  @Column({ type: 'varchar', length: 16 })
  trust!: TrustLevel;
}
