import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';

/**
 * A user's own budget (`setUserBudget`), replacing the default of their trust level; a null limit is
 * unlimited. Users without a row get `budgets.defaults.<TRUST>`.
 */
@Entity('user_budgets')
export class UserBudget extends BaseRecord {
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User>;

  @Column({ type: 'float', nullable: true })
  dailyUsd!: number | null;

  @Column({ type: 'float', nullable: true })
  monthlyUsd!: number | null;
}
