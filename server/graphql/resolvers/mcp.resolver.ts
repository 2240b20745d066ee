import { Arg, Authorized, Ctx as GqlCtx, Mutation, Query, Resolver } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { TrustLevel } from '../../common/trust';
import { definitionOfInput, McpServerInfo, McpServerInput, McpService, toMcpServerInfo } from '../../modules/mcp';
import type { GraphQLContext } from '../context';

/** MCP servers: status and tools, run-time management (ADMIN; stdio servers OWNER), users' own credentials. */
@Resolver()
export class McpResolver {
  constructor(private readonly mcp: McpService) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => [McpServerInfo], { description: 'MCP servers: ADMIN and above see all with their setup and last error; others the servers they may use.' })
  async mcpServers(@GqlCtx() { ctx }: GraphQLContext): Promise<McpServerInfo[]> {
    return (await this.mcp.servers(ctx)).map(toMcpServerInfo);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => McpServerInfo, { description: 'Adds or changes an MCP server; applies without a restart. Only an OWNER may add or change a stdio server.' })
  async upsertMcpServer(@Arg('input', () => McpServerInput) input: McpServerInput, @GqlCtx() { ctx }: GraphQLContext): Promise<McpServerInfo> {
    return toMcpServerInfo(await this.mcp.upsert(ctx, { name: input.name, definition: definitionOfInput(input) }));
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => Boolean, { description: 'Removes an MCP server added at run time (config servers are removed from the config file).' })
  deleteMcpServer(@Arg('name') name: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.mcp.delete(ctx, name);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => McpServerInfo, { description: "Closes the server's connections and connects again (a stdio server is restarted)." })
  async restartMcpServer(@Arg('name') name: string, @GqlCtx() { ctx }: GraphQLContext): Promise<McpServerInfo> {
    return toMcpServerInfo(await this.mcp.restart(ctx, name));
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean, { description: 'Stores your own headers for an auth: per_user server (encrypted; never shown again).' })
  setMcpCredential(@Arg('server') server: string, @Arg('headers', () => GraphQLJSON) headers: unknown, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.mcp.setCredential(ctx, server, headers);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Boolean, { description: 'Removes your credentials (headers or OAuth tokens) for a server.' })
  deleteMcpCredential(@Arg('server') server: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.mcp.deleteCredential(ctx, server);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => String, { description: 'Starts your OAuth sign-in to an auth: oauth server; returns the URL to open.' })
  startMcpOAuth(@Arg('server') server: string, @GqlCtx() { ctx }: GraphQLContext): Promise<string> {
    return this.mcp.startOAuth(ctx, server);
  }
}
