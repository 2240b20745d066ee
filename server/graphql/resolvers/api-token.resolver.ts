import { Arg, Authorized, Ctx as GqlCtx, Field, ID, Mutation, ObjectType, Resolver } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { ApiToken, ApiTokenService } from '../../modules/auth';
import type { GraphQLContext } from '../context';

@ObjectType({ description: 'A new API token. The secret is shown only in this answer.' })
class CreatedApiToken {
  @Field({ description: 'The secret; store it now, it cannot be read again.' })
  token!: string;

  @Field(() => ApiToken)
  apiToken!: ApiToken;
}

@Resolver()
export class ApiTokenResolver {
  constructor(private readonly tokens: ApiTokenService) {}

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => CreatedApiToken, { description: 'Own tokens for MEMBER and above; tokens for others need OWNER.' })
  createApiToken(
    @Arg('userId', () => ID) userId: string,
    @Arg('name', () => String) name: string,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<CreatedApiToken> {
    return this.tokens.create(ctx, userId, name);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => ApiToken)
  revokeApiToken(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<ApiToken> {
    return this.tokens.revoke(ctx, id);
  }
}
