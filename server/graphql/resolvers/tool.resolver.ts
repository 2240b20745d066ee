import { Arg, Authorized, Ctx as GqlCtx, ID, Mutation, Query, Resolver } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import {
  ToolApproval,
  ToolApprovalDecision,
  ToolApprovalService,
  ToolApprovalStatus,
  ToolInfo,
  ToolRegistry,
} from '../../modules/tools';
import type { GraphQLContext } from '../context';

/** Tools with their floors and activation, and the approvals of paused tool calls. */
@Resolver()
export class ToolResolver {
  constructor(
    private readonly registry: ToolRegistry,
    private readonly approvals: ToolApprovalService,
  ) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => [ToolInfo], { description: 'Every tool, with whether it is enabled on the channel and usable by you.' })
  tools(
    @Arg('channel', () => String, { nullable: true, description: 'Channel whose activation to show; null shows the global settings.' })
    channel: string | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ToolInfo[]> {
    return this.registry.describeFor(ctx, channel ?? null);
  }

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [ToolApproval], { description: 'Tool approvals, newest first (at most 200).' })
  toolApprovals(
    @Arg('status', () => ToolApprovalStatus, { nullable: true }) status: ToolApprovalStatus | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ToolApproval[]> {
    return this.approvals.list(ctx, status);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => ToolApproval, { description: 'OWNER for OWNER-level tools (shell), ADMIN and above for the others.' })
  decideToolApproval(
    @Arg('id', () => ID) id: string,
    @Arg('decision', () => ToolApprovalDecision) decision: ToolApprovalDecision,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ToolApproval> {
    return this.approvals.decide(ctx, id, decision);
  }
}
