import { Arg, Authorized, Ctx as GqlCtx, Field, ID, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { TrustLevel } from '../../common/trust';
import type { UserDataService } from '../../modules/userdata';
import type { GraphQLContext } from '../context';

@ObjectType({ description: 'An export of a user\'s data being built; follow jobProgress(jobId), then fetch downloadUrl once.' })
class UserDataExport {
  @Field(() => ID) exportId!: string;
  @Field(() => ID, { description: 'The background job building the archive (jobProgress(jobId)).' }) jobId!: string;
  @Field({ description: '/exports/<id>?token=… relative to the server URL: works once, until expiresAt, after the job completed (409 before).' })
  downloadUrl!: string;
  @Field() expiresAt!: Date;
}

@ObjectType({ description: 'What an erasure removed; counts only.' })
class UserErasure {
  @Field(() => ID) userId!: string;
  @Field({ description: 'False when the user was already gone (the call still swept what was left).' }) existed!: boolean;
  @Field(() => Int, { description: 'Rows deleted from the database.' }) rows!: number;
  @Field(() => GraphQLJSON, { description: 'Rows deleted per table.' }) tables!: Record<string, number>;
  @Field(() => GraphQLJSON, { description: 'Removed outside the tables: memory index items, beat schedules, Redis keys, files, export links.' })
  outside!: Record<string, number>;
}

/** A user's data: export it (the user or an OWNER) and erase it (an OWNER, or the user themself). */
@Resolver()
export class UserDataResolver {
  constructor(private readonly service: UserDataService) {}

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => UserDataExport, { description: 'Builds an archive of everything of the user (profile, identities, sessions and messages as JSONL, memories, documents, beats, usage, workspace files) on a background job; the user themself or an OWNER.' })
  async exportUserData(@Arg('userId', () => ID) userId: string, @GqlCtx() { ctx }: GraphQLContext): Promise<UserDataExport> {
    return Object.assign(new UserDataExport(), await this.service.requestExport(ctx, userId));
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => UserErasure, { description: 'Erases everything of the user (rows, vector index items, Redis keys, files); the audit log keeps an anonymous tombstone. OWNER, or the user themself. Idempotent. CONFLICT for the last OWNER.' })
  async eraseUser(@Arg('userId', () => ID) userId: string, @GqlCtx() { ctx }: GraphQLContext): Promise<UserErasure> {
    return Object.assign(new UserErasure(), await this.service.erase(ctx, userId));
  }
}
