import DataLoader from 'dataloader';
import { Arg, Args, Authorized, Ctx as GqlCtx, Field, FieldResolver, ID, InputType, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { Length, MaxLength } from '../validators';
import { TrustLevel } from '../../common/trust';
import { toPageArgs } from '../../common/pagination';
import { Beat, BeatKind, BeatRun, type BeatRunEvent, type BeatPatch, type BeatRunner, type BeatService, type CronPreview as CronPreviewShape } from '../../modules/beats';
import { User } from '../../modules/users';
import { Connection, ConnectionArgs, toConnection, type ConnectionShape } from '../connection';
import type { GraphQLContext } from '../context';

const BeatRunConnection = Connection(BeatRun);

@ObjectType({ description: 'What a cron expression would do: whether it is accepted (and why not), in words, and the next runs.' })
class CronPreview implements CronPreviewShape {
  @Field() valid!: boolean;
  @Field(() => String, { nullable: true, description: 'Why the expression is refused and how to write it; null when valid.' }) error!: string | null;
  @Field(() => String, { nullable: true, description: 'The schedule in words, e.g. "At 07:00, Monday through Friday".' }) description!: string | null;
  @Field({ description: 'The time zone the runs are computed in.' }) timezone!: string;
  @Field(() => [Date]) nextRuns!: Date[];
}

/** One batch of "last run" look-ups per request (the beats list asks for each beat). */
const lastRunLoaders = new WeakMap<object, DataLoader<string, BeatRun | null>>();

@InputType({ description: 'A new beat: a reminder or a task, on a cron schedule (with time zone) or once at a time.' })
class CreateBeatInput {
  @Field()
  @Length(1, 100)
  name!: string;

  @Field({ description: 'The reminder text, or the instruction of a task.' })
  @Length(1, 8000)
  text!: string;

  @Field(() => BeatKind, { nullable: true, description: 'Defaults to TASK.' })
  kind?: BeatKind | null;

  @Field(() => String, { nullable: true, description: 'Cron expression, e.g. "0 7 * * *"; give this or `at`.' })
  @MaxLength(100)
  cron?: string | null;

  @Field(() => Date, { nullable: true, description: 'One-shot time instead of cron.' })
  at?: Date | null;

  @Field(() => String, { nullable: true, description: 'IANA time zone, default beats.timezone.' })
  @MaxLength(64)
  timezone?: string | null;

  @Field(() => String, { nullable: true, description: "Target channel; with targetChatId. Default the owner's principal chat." })
  @MaxLength(32)
  targetChannel?: string | null;

  @Field(() => String, { nullable: true })
  @MaxLength(200)
  targetChatId?: string | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;

  @Field(() => ID, { nullable: true, description: "Owner (ADMIN and above); default you." })
  userId?: string | null;
}

@InputType({ description: 'Changes to a beat; absent fields stay. Setting cron clears at and the other way round.' })
class UpdateBeatInput {
  @Field(() => String, { nullable: true })
  @Length(1, 100)
  name?: string | null;

  @Field(() => String, { nullable: true })
  @Length(1, 8000)
  text?: string | null;

  @Field(() => BeatKind, { nullable: true })
  kind?: BeatKind | null;

  @Field(() => String, { nullable: true })
  @MaxLength(100)
  cron?: string | null;

  @Field(() => Date, { nullable: true })
  at?: Date | null;

  @Field(() => String, { nullable: true })
  @MaxLength(64)
  timezone?: string | null;

  @Field(() => String, { nullable: true, description: 'Set with targetChatId; both null for the principal chat.' })
  @MaxLength(32)
  targetChannel?: string | null;

  @Field(() => String, { nullable: true })
  @MaxLength(200)
  targetChatId?: string | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}

/** The changes an update asks for: null means "leave as is", except for the target (null: principal chat). */
function patchOf(input: UpdateBeatInput): BeatPatch {
  const patch: BeatPatch = {};
  for (const key of ['name', 'text', 'kind', 'cron', 'at', 'timezone', 'enabled'] as const) {
    if (input[key] !== undefined && input[key] !== null) (patch as Record<string, unknown>)[key] = input[key];
  }
  if (input.targetChannel !== undefined) patch.targetChannel = input.targetChannel;
  if (input.targetChatId !== undefined) patch.targetChatId = input.targetChatId;
  return patch;
}

@Resolver(() => Beat)
export class BeatResolver {
  constructor(
    private readonly beatService: BeatService,
    private readonly runner: BeatRunner,
    private readonly maxPageSize: number,
  ) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => [Beat], { description: "Own beats; everyone's and the managed ones for ADMIN and above." })
  beats(@Arg('userId', () => ID, { nullable: true }) userId: string | null, @GqlCtx() { ctx }: GraphQLContext): Promise<Beat[]> {
    return this.beatService.findMany(ctx, { userId });
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => Beat)
  beat(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<Beat> {
    return this.beatService.get(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => BeatRunConnection, { description: 'Runs of a beat, newest first.' })
  async beatRuns(@Arg('beatId', () => ID) beatId: string, @Args() { first, after }: ConnectionArgs, @GqlCtx() { ctx }: GraphQLContext): Promise<ConnectionShape<BeatRun>> {
    return toConnection(await this.beatService.runs(ctx, beatId, toPageArgs(first, after, this.maxPageSize)));
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => CronPreview, { description: 'Checks a cron expression as createBeat would (below ADMIN also the frequency floor) and previews its next runs in the time zone (default beats.timezone).' })
  cronPreview(
    @Arg('cron') cron: string,
    @Arg('timezone', () => String, { nullable: true }) timezone: string | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): CronPreview {
    return Object.assign(new CronPreview(), this.beatService.previewCron(ctx, cron.slice(0, 200), timezone ? timezone.slice(0, 64) : null));
  }

  @FieldResolver(() => String, { description: 'The schedule in words ("At 07:00, Monday through Friday", or the one-shot time).' })
  schedule(@Root() beat: Beat): string {
    return this.beatService.schedule(beat);
  }

  @FieldResolver(() => BeatRun, { nullable: true, description: 'The newest run; null when it never ran.' })
  lastRun(@Root() beat: Beat, @GqlCtx() context: GraphQLContext): Promise<BeatRun | null> {
    let loader = lastRunLoaders.get(context);
    if (!loader) lastRunLoaders.set(context, (loader = new DataLoader((ids) => this.beatService.lastRuns(context.ctx, ids))));
    return loader.load(beat.id);
  }

  @FieldResolver(() => User, { nullable: true, description: 'The owner (null for managed beats without one).' })
  owner(@Root() beat: Beat, @GqlCtx() { loaders }: GraphQLContext): Promise<User | null> {
    return beat.userId ? loaders.userById.load(beat.userId) : Promise.resolve(null);
  }

  @FieldResolver(() => [Date], { description: 'The next 5 run times (empty when disabled or done).' })
  nextRuns(@Root() beat: Beat): Date[] {
    return this.beatService.preview(beat, 5);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Beat, { description: 'TRUSTED and above; schedules more often than beats.min_interval_minutes need ADMIN.' })
  createBeat(@Arg('input') input: CreateBeatInput, @GqlCtx() { ctx }: GraphQLContext): Promise<Beat> {
    return this.beatService.create(ctx, input);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Beat, { description: "Own beats from TRUSTED, everyone's from ADMIN; managed beats change only in heartbeats.default.json." })
  updateBeat(@Arg('id', () => ID) id: string, @Arg('input') input: UpdateBeatInput, @GqlCtx() { ctx }: GraphQLContext): Promise<Beat> {
    return this.beatService.update(ctx, id, patchOf(input));
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean)
  deleteBeat(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.beatService.delete(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => BeatRun, { description: 'Runs the beat now and returns the finished run.' })
  runBeat(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<BeatRun> {
    return this.runner.runNow(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Subscription(() => BeatRun, {
    name: 'beatRuns',
    description: "Runs as they start and finish: of your beats, or everyone's for ADMIN and above; optionally of one beat.",
    subscribe: ({ args, context }) => {
      const { ctx, streams } = context as GraphQLContext;
      if (!streams?.beatRuns) throw new Error('beat runs are not available on this server');
      return streams.beatRuns(ctx, (args as { beatId?: string | null }).beatId ?? null);
    },
  })
  beatRunsFeed(@Root() event: BeatRunEvent, @Arg('beatId', () => ID, { nullable: true }) _beatId: string | null): BeatRun {
    return event.run;
  }
}
