import { Arg, Authorized, Ctx as GqlCtx, ID, Mutation, Resolver } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import type { MemoryReindexCommands } from '../../modules/memory';
import type { GraphQLContext } from '../context';
import { QueuedJob } from './skill.resolver';

/** Re-indexing the memory search index as a background job (ADMIN and above). */
@Resolver()
export class MemoryReindexResolver {
  constructor(private readonly reindex: MemoryReindexCommands) {}

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => QueuedJob, { description: "Rebuilds the memory search index (every memory, or one user's) as a background job; follow it with jobProgress(jobId)." })
  async reindexMemories(@Arg('userId', () => ID, { nullable: true }) userId: string | null, @GqlCtx() { ctx }: GraphQLContext): Promise<QueuedJob> {
    return Object.assign(new QueuedJob(), { jobId: await this.reindex.requestReindex(ctx, userId ?? null), queue: 'memory' });
  }
}
