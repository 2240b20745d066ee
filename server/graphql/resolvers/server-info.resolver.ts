import { Authorized, Field, Int, ObjectType, Query, Resolver } from 'type-graphql';
import { TrustLevel } from '../../common/trust';

/** What the composition root tells the API about its process. */
export interface ServerInfoSource {
  version: string;
  startedAt: Date;
  /** True when no model provider is configured and the built-in mock answers; null without the chat services. */
  usingMockModel(): boolean | null;
}

@ObjectType({ description: 'This server process: version, uptime, and whether a real model is configured.' })
class ServerInfo {
  @Field() version!: string;
  @Field() startedAt!: Date;
  @Field(() => Int) uptimeSeconds!: number;
  @Field({ description: 'True when no model provider is configured and the built-in mock writes every reply.' }) usingMockModel!: boolean;
  @Field() nodeVersion!: string;
}

@Resolver()
export class ServerInfoResolver {
  constructor(private readonly source: ServerInfoSource) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => ServerInfo, { description: 'Version and uptime of the process that answers, and whether replies come from the mock model.' })
  serverInfo(): ServerInfo {
    return Object.assign(new ServerInfo(), {
      version: this.source.version,
      startedAt: this.source.startedAt,
      uptimeSeconds: Math.floor((Date.now() - this.source.startedAt.getTime()) / 1000),
      usingMockModel: this.source.usingMockModel() ?? false,
      nodeVersion: process.versions.node,
    });
  }
}
