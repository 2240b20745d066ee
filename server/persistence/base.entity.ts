import { BeforeInsert, BeforeUpdate, Column, PrimaryColumn } from 'typeorm';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../common/ids';

/**
 * Columns every table has: a time-ordered UUIDv7 id (so ordering by id is ordering by creation) and
 * creation/update times set by the application, with millisecond precision on every database.
 */
@ObjectType()
export abstract class BaseRecord {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field()
  @Column({ type: Date })
  createdAt!: Date;

  @Field()
  @Column({ type: Date })
  updatedAt!: Date;

  @BeforeInsert()
  protected beforeInsertBase(): void {
    this.id ??= newId();
    const now = new Date();
    this.createdAt ??= now;
    this.updatedAt ??= now;
  }

  @BeforeUpdate()
  protected beforeUpdateBase(): void {
    this.updatedAt = new Date();
  }
}
