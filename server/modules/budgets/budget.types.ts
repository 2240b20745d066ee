import { Field, Float, ObjectType } from 'type-graphql';

/** A user's limits and what they spent in the current day and month (DESIGN §10, Budgets). */
@ObjectType({ description: "A user's budget: limits (null: unlimited) and spending in the current day and month of the server's budget time zone." })
export class BudgetStatus {
  @Field(() => Float, { nullable: true, description: 'Most the user may spend per day, in USD; null: unlimited.' })
  dailyUsd!: number | null;

  @Field(() => Float, { nullable: true, description: 'Most the user may spend per month, in USD; null: unlimited.' })
  monthlyUsd!: number | null;

  @Field(() => Float, { description: 'Spent today, in USD.' })
  spentTodayUsd!: number;

  @Field(() => Float, { description: 'Spent this month, in USD.' })
  spentMonthUsd!: number;

  @Field({ description: 'When the spending that limits the user starts again from zero: the next midnight, or the next month when only the monthly budget is set or it is the one used up.' })
  resetsAt!: Date;

  @Field({ description: 'True when the budget is set for this user (setUserBudget), false when it is the default of their trust level.' })
  custom!: boolean;
}
