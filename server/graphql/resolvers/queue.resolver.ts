import { Arg, Ctx as GqlCtx, Field, FieldResolver, ID, Int, Mutation, ObjectType, Query, Resolver, Root, Authorized } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { JobState, QueueService, type QueueJobInfo } from '../../modules/queues';
import type { GraphQLContext } from '../context';

@ObjectType({ description: 'Jobs of a queue per state.' })
class JobCounts {
  @Field(() => Int) waiting!: number;
  @Field(() => Int) prioritized!: number;
  @Field(() => Int) active!: number;
  @Field(() => Int) delayed!: number;
  @Field(() => Int) waitingChildren!: number;
  @Field(() => Int) paused!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Int) completed!: number;
}

@ObjectType({ description: 'A queued job (never its payload).' })
class QueueJob {
  @Field() queue!: string;
  @Field(() => ID) id!: string;
  @Field() name!: string;
  @Field(() => JobState) state!: JobState;
  @Field(() => Int) attemptsMade!: number;
  @Field(() => Int) maxAttempts!: number;
  @Field(() => String, { nullable: true }) failedReason!: string | null;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true }) processedAt!: Date | null;
  @Field(() => Date, { nullable: true }) finishedAt!: Date | null;
}

@ObjectType({ description: 'A BullMQ queue: turns, outbound, summarizer, maintenance or model-calls.<provider>.' })
class QueueInfo {
  @Field() name!: string;
  @Field(() => JobCounts) counts!: JobCounts;
}

function toJob(j: QueueJobInfo): QueueJob {
  const at = (ms: number | null) => (ms ? new Date(ms) : null);
  return Object.assign(new QueueJob(), { ...j, createdAt: new Date(j.createdAt), processedAt: at(j.processedAt), finishedAt: at(j.finishedAt) });
}

@Resolver(() => QueueInfo)
export class QueueResolver {
  constructor(private readonly service: QueueService) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [QueueInfo], { description: 'Every background queue with its job counts (ADMIN).' })
  async queues(@GqlCtx() { ctx }: GraphQLContext): Promise<QueueInfo[]> {
    const list = await this.service.list(ctx);
    return list.map(({ name, counts }) => Object.assign(new QueueInfo(), { name, counts: { ...counts, waitingChildren: counts[JobState.WAITING_CHILDREN] } }));
  }

  @FieldResolver(() => [QueueJob], { description: 'Jobs in one state, newest first.' })
  async jobs(
    @Root() queue: QueueInfo,
    @Arg('state', () => JobState) state: JobState,
    @Arg('first', () => Int, { defaultValue: 20 }) first: number,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<QueueJob[]> {
    return (await this.service.jobs(ctx, queue.name, state, first)).map(toJob);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => QueueJob, { description: 'Moves a failed job back to waiting (ADMIN, audited). CONFLICT unless it failed.' })
  async retryJob(@Arg('queue') queue: string, @Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<QueueJob> {
    return toJob(await this.service.retry(ctx, queue, id));
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => Boolean, { description: 'Removes a job that is not running (ADMIN, audited).' })
  removeJob(@Arg('queue') queue: string, @Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.service.remove(ctx, queue, id);
  }
}
