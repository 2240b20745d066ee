import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { Message } from './message.entity';

/** An image attachment, stored base64 and referenced by its message. */
@ObjectType()
@Entity('images')
export class Image extends BaseRecord {
  @Field(() => String, { nullable: true })
  @Index()
  @Column({ type: 'varchar', length: 36, nullable: true })
  messageId!: string | null;

  @ManyToOne(() => Message, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'messageId' })
  message?: Relation<Message> | null;

  @Field()
  @Column({ type: 'varchar', length: 100 })
  mimeType!: string;

  @Column({ type: 'text' })
  dataBase64!: string;
}
