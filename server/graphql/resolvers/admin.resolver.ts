import { Arg, Args, Authorized, Ctx as GqlCtx, Field, ID, InputType, Mutation, Query, Resolver } from 'type-graphql';
import { Length, MaxLength } from '../validators';
import { TrustLevel } from '../../common/trust';
import { toPageArgs } from '../../common/pagination';
import { AuditEntry, AuditService } from '../../modules/audit';
import { PluginSetting, PluginSettingService } from '../../modules/plugins';
import { Connection, ConnectionArgs, toConnection, type ConnectionShape } from '../connection';
import type { GraphQLContext } from '../context';

const AuditEntryConnection = Connection(AuditEntry);

@InputType()
class AuditFilter {
  @Field(() => String, { nullable: true })
  @MaxLength(100)
  action?: string | null;

  @Field(() => ID, { nullable: true })
  actorUserId?: string | null;
}

@InputType()
class PluginSettingInput {
  @Field({ description: 'Tool or channel name, e.g. http_request or channel:telegram.' })
  @Length(1, 100)
  plugin!: string;

  @Field(() => String, { nullable: true, description: 'Limit the setting to one channel; null applies everywhere.' })
  @MaxLength(32)
  channel?: string | null;

  @Field()
  enabled!: boolean;
}

/** Operations for ADMIN and above: plugin settings and the audit log. */
@Resolver()
export class AdminResolver {
  constructor(
    private readonly plugins: PluginSettingService,
    private readonly audit: AuditService,
    private readonly maxPageSize: number,
  ) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [PluginSetting])
  pluginSettings(@GqlCtx() { ctx }: GraphQLContext): Promise<PluginSetting[]> {
    return this.plugins.list(ctx);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => PluginSetting)
  setPluginSetting(@Arg('input') input: PluginSettingInput, @GqlCtx() { ctx }: GraphQLContext): Promise<PluginSetting> {
    return this.plugins.set(ctx, input.plugin, input.channel ?? null, input.enabled);
  }

  @Authorized(TrustLevel.ADMIN)
  @Query(() => AuditEntryConnection, { description: 'Newest first.' })
  async auditLog(
    @Args() { first, after }: ConnectionArgs,
    @Arg('filter', () => AuditFilter, { nullable: true }) filter: AuditFilter | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ConnectionShape<AuditEntry>> {
    return toConnection(await this.audit.list(ctx, filter ?? {}, toPageArgs(first, after, this.maxPageSize)));
  }
}
