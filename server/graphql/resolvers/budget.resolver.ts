import { Arg, Authorized, Ctx as GqlCtx, FieldResolver, Float, ID, Mutation, Resolver, Root } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { BudgetStatus, type BudgetService } from '../../modules/budgets';
import { User } from '../../modules/users';
import type { GraphQLContext } from '../context';

/** Budgets (DESIGN §10): `User.budget`, `setUserBudget`, `clearUserBudget`. */
@Resolver(() => User)
export class BudgetResolver {
  constructor(private readonly budgets: BudgetService) {}

  @FieldResolver(() => BudgetStatus, { description: 'Limits and spending of the current day and month: your own, or anyone\'s for ADMIN and above.' })
  budget(@Root() user: User, @GqlCtx() { ctx }: GraphQLContext): Promise<BudgetStatus> {
    return this.budgets.status(ctx, user.id);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => BudgetStatus, { description: "Sets a user's own daily and monthly limits in USD (null: unlimited), replacing their trust level's default. ADMIN for users up to TRUSTED, OWNER for anyone." })
  setUserBudget(
    @Arg('userId', () => ID) userId: string,
    @Arg('dailyUsd', () => Float, { nullable: true }) dailyUsd: number | null,
    @Arg('monthlyUsd', () => Float, { nullable: true }) monthlyUsd: number | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<BudgetStatus> {
    return this.budgets.setUserBudget(ctx, userId, dailyUsd ?? null, monthlyUsd ?? null);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => BudgetStatus, { description: "Drops a user's own limits: the default of their trust level (budgets.defaults) applies again." })
  clearUserBudget(@Arg('userId', () => ID) userId: string, @GqlCtx() { ctx }: GraphQLContext): Promise<BudgetStatus> {
    return this.budgets.clearUserBudget(ctx, userId);
  }
}
