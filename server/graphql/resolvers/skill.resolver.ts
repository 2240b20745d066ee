import { Arg, Authorized, Ctx as GqlCtx, Field, FieldResolver, Float, ID, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { TrustLevel } from '../../common/trust';
import { JobState, type JobProgressUpdate } from '../../modules/queues';
import { LearnedSkill, SkillService, type SkillSyncCommands } from '../../modules/skills';
import type { GraphQLContext } from '../context';

@ObjectType({ description: 'A background job started through the API; follow it with jobProgress(jobId).' })
export class QueuedJob {
  @Field(() => ID) jobId!: string;
  @Field() queue!: string;
}

@ObjectType({ description: 'One update of a background job; the stream ends after COMPLETED or FAILED.' })
class JobProgress implements JobProgressUpdate {
  @Field(() => ID) jobId!: string;
  @Field() queue!: string;
  @Field(() => JobState) state!: JobState;
  @Field(() => GraphQLJSON, { nullable: true, description: 'What the job reported last, e.g. { done, total }.' }) progress!: unknown;
  @Field(() => Float, { nullable: true, description: '0–100 when the job reports { done, total }.' }) percent!: number | null;
  @Field(() => GraphQLJSON, { nullable: true, description: 'The result once completed (syncSkills: added, updated, removed, unchanged, problems).' }) result!: unknown;
  @Field(() => String, { nullable: true }) error!: string | null;
}

/** Skills synced from the skills folder: list, switch on/off, sync now (ADMIN and above). */
@Resolver(() => LearnedSkill)
export class SkillResolver {
  constructor(
    private readonly service: SkillService,
    private readonly sync: SkillSyncCommands,
  ) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [LearnedSkill], { description: 'Every synced skill, by name. What a sender may use: /skills in chat.' })
  skills(@GqlCtx() { ctx }: GraphQLContext): Promise<LearnedSkill[]> {
    return this.service.list(ctx);
  }

  @FieldResolver(() => String, { description: 'The file the skill comes from: <skills.dir>/<name>/SKILL.md.' })
  sourceFile(@Root() skill: LearnedSkill): string {
    return this.service.sourceFile(skill);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => LearnedSkill, { description: 'Switches a skill on or off everywhere; per channel use setPluginSetting(plugin: "skill:<name>").' })
  setSkillEnabled(@Arg('name') name: string, @Arg('enabled') enabled: boolean, @GqlCtx() { ctx }: GraphQLContext): Promise<LearnedSkill> {
    return this.service.setEnabled(ctx, name, enabled);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => QueuedJob, { description: 'Syncs the skills folder now, as a background job (the folder is also watched).' })
  async syncSkills(@GqlCtx() { ctx }: GraphQLContext): Promise<QueuedJob> {
    return Object.assign(new QueuedJob(), { jobId: await this.sync.requestSync(ctx), queue: 'skills' });
  }

  @Authorized(TrustLevel.MEMBER)
  @Subscription(() => JobProgress, {
    description: 'Updates of a background job (e.g. syncSkills; ADMIN) from its current state until it completes or fails. MEMBERs follow the ingestion of documents they added.',
    subscribe: ({ args, context }) => {
      const { ctx, streams } = context as GraphQLContext;
      if (!streams?.jobProgress) throw new Error('job progress is not available on this server');
      return streams.jobProgress(ctx, String(args.jobId));
    },
  })
  jobProgress(@Arg('jobId', () => ID) _jobId: string, @Root() update: JobProgressUpdate): JobProgressUpdate {
    return update;
  }
}
