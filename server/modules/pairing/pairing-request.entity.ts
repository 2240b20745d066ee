import { Column, Entity, Index } from 'typeorm';
import { Field, ObjectType, registerEnumType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';

export enum PairingStatus {
  PENDING = 'PENDING',
  APPROVED = 'APPROVED',
  DENIED = 'DENIED',
  EXPIRED = 'EXPIRED',
}
registerEnumType(PairingStatus, { name: 'PairingStatus' });

/** An unknown sender asking to be let in, with the code an ADMIN approves. */
@ObjectType()
@Entity('pairing_requests')
@Index(['channel', 'status'])
export class PairingRequest extends BaseRecord {
  @Field()
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 16 })
  code!: string;

  @Field()
  @Column({ type: 'varchar', length: 32 })
  channel!: string;

  @Field()
  @Column({ type: 'varchar', length: 200 })
  handle!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  displayName!: string | null;

  @Field(() => PairingStatus)
  @Column({ type: 'varchar', length: 16 })
  status!: PairingStatus;

  @Field()
  @Column({ type: Date })
  expiresAt!: Date;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  decidedAt!: Date | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  decidedBy!: string | null;

  /** The user created or linked on approval. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 36, nullable: true })
  userId!: string | null;
}
