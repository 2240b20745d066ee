import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';

/**
 * `POST /hooks/<name>`: another system triggers a turn of the owner in the `hook:<name>` session. Only
 * the secret's SHA-256 is stored; the secret itself is shown once, by `createWebhook`.
 */
@ObjectType({ description: 'A webhook: POST /hooks/<name> with "Authorization: Bearer <secret>" runs a turn of its owner.' })
@Entity('webhooks')
export class Webhook extends BaseRecord {
  @Field()
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 64 })
  name!: string;

  @Field(() => String, { nullable: true, description: 'What the assistant should do with each call (the body is given as data).' })
  @Column({ type: 'text', nullable: true })
  instructions!: string | null;

  @Field({ description: 'Whose trust the turn runs with; the result goes to their principal chat unless a target is set.' })
  @Index()
  @Column({ type: 'varchar', length: 36 })
  ownerId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'ownerId' })
  owner?: Relation<User>;

  @Column({ type: 'varchar', length: 64 })
  secretHash!: string;

  @Field(() => String, { nullable: true, description: 'Channel of the target chat (telegram, whatsapp, web, tui); null: the owner\'s principal chat.' })
  @Column({ type: 'varchar', length: 32, nullable: true })
  targetChannel!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  targetChatId!: string | null;

  @Field()
  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  @Field(() => Date, { nullable: true })
  @Column({ type: Date, nullable: true })
  lastCalledAt!: Date | null;
}
