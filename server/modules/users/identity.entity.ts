import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from './user.entity';

/** A channel handle of a user: `telegram:<userId>`, `whatsapp:<jid>`, `web:<userId>`, `tui:<userId>`. */
@ObjectType()
@Entity('identities')
@Index(['channel', 'handle'], { unique: true })
export class Identity extends BaseRecord {
  @Field()
  @Index()
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User>;

  @Field()
  @Column({ type: 'varchar', length: 32 })
  channel!: string;

  @Field()
  @Column({ type: 'varchar', length: 200 })
  handle!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 200, nullable: true })
  displayName!: string | null;

  /** `channel:handle`, the form used in DESIGN and config allowlists. */
  @Field()
  get key(): string {
    return `${this.channel}:${this.handle}`;
  }
}
