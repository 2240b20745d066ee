import { Arg, Authorized, Ctx as GqlCtx, Field, Float, Int, Mutation, ObjectType, Query, Resolver, registerEnumType } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { ProviderHealth, type ProviderHealthService, type ProviderStatus, type ProviderTestResult, type RoleRoute } from '../../modules/models';
import type { GraphQLContext } from '../context';

registerEnumType(ProviderHealth, {
  name: 'ProviderHealth',
  description: 'UP: the probe answers; DEGRADED: it answers but half or more of the recent calls failed; DOWN: the probe fails.',
});

@ObjectType('ModelRoute', { description: 'Where an agent role\'s calls go: position 0 is the primary route, then the fallbacks in order.' })
class ModelRouteType implements RoleRoute {
  @Field(() => String, { description: 'main, summarizer, heartbeat or embeddings.' }) role!: RoleRoute['role'];
  @Field() provider!: string;
  @Field() model!: string;
  @Field(() => Int) position!: number;
}

@ObjectType('ModelProviderStatus', { description: 'A model provider with its health, recent latency and errors, and the routes that use it.' })
class ModelProviderStatusType implements ProviderStatus {
  @Field() name!: string;
  @Field({ description: 'openai-compatible or mock.' }) kind!: string;
  @Field(() => String, { nullable: true, description: 'Base URL without credentials; null for the mock.' }) baseUrl!: string | null;
  @Field(() => ProviderHealth) health!: ProviderHealth;
  @Field({ description: 'When the probe (GET /models) ran; results are reused for a few seconds.' }) checkedAt!: Date;
  @Field(() => Int) probeMs!: number;
  @Field(() => String, { nullable: true }) probeError!: string | null;
  @Field(() => Int, { description: 'Calls in the window (the last 50 calls of this provider across the deployment).' }) recentCalls!: number;
  @Field(() => Float, { nullable: true, description: 'Share of failed calls in the window, 0..1.' }) errorRate!: number | null;
  @Field(() => Int, { nullable: true }) avgLatencyMs!: number | null;
  @Field(() => Int, { nullable: true }) p95LatencyMs!: number | null;
  @Field(() => String, { nullable: true }) lastError!: string | null;
  @Field(() => Date, { nullable: true }) lastErrorAt!: Date | null;
  @Field(() => [ModelRouteType]) routes!: RoleRoute[];
}

@ObjectType('ModelProviderTest', { description: 'The outcome of testModelProvider: one tiny real completion.' })
class ModelProviderTestType implements ProviderTestResult {
  @Field() provider!: string;
  @Field() model!: string;
  @Field() ok!: boolean;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) reply!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
}

/** Providers & models (ADMIN and above): health, routes and a test call. */
@Resolver()
export class ModelResolver {
  constructor(private readonly health: ProviderHealthService) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [ModelProviderStatusType], { description: 'Every model provider with a cheap probe (cached briefly; fresh: true probes now) and its recent calls.' })
  modelProviders(@Arg('fresh', { defaultValue: false }) fresh: boolean, @GqlCtx() { ctx }: GraphQLContext): Promise<ProviderStatus[]> {
    return this.health.list(ctx, fresh);
  }

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [ModelRouteType], { description: 'The routes of every agent role (main, summarizer, heartbeat, embeddings), primary first.' })
  modelRoles(@GqlCtx() { ctx }: GraphQLContext): RoleRoute[] {
    return this.health.roles(ctx);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => ModelProviderTestType, { description: 'Sends one tiny completion through the provider and reports the answer or the error.' })
  testModelProvider(@Arg('name') name: string, @GqlCtx() { ctx }: GraphQLContext): Promise<ProviderTestResult> {
    return this.health.test(ctx, name);
  }
}
