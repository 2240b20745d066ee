import { Arg, Args, ArgsType, Ctx as GqlCtx, Field, FieldResolver, ID, InputType, Mutation, Query, Resolver, Root, Authorized } from 'type-graphql';
import { Length, MaxLength } from '../validators';
import { TrustLevel } from '../../common/trust';
import { toPageArgs } from '../../common/pagination';
import { ApiToken, ApiTokenService } from '../../modules/auth';
import { Identity, User, UserService } from '../../modules/users';
import { Connection, ConnectionArgs, toConnection, type ConnectionShape } from '../connection';
import type { GraphQLContext } from '../context';

const UserConnection = Connection(User);

@InputType()
class CreateUserInput {
  @Field()
  @Length(1, 200)
  displayName!: string;

  @Field(() => TrustLevel, { nullable: true, description: 'Defaults to the configured default_trust (MEMBER).' })
  trust?: TrustLevel | null;
}

@InputType()
class LinkIdentityInput {
  @Field(() => ID)
  userId!: string;

  @Field({ description: 'telegram, whatsapp, web or tui' })
  @Length(1, 32)
  channel!: string;

  @Field({ description: 'Platform id: Telegram user id, WhatsApp JID, …' })
  @Length(1, 200)
  handle!: string;

  @Field(() => String, { nullable: true })
  @MaxLength(200)
  displayName?: string | null;
}

@ArgsType()
class RenameUserArgs {
  @Field(() => ID)
  userId!: string;

  @Field()
  @Length(1, 100)
  displayName!: string;
}

@Resolver(() => User)
export class UserResolver {
  constructor(
    private readonly userService: UserService,
    private readonly tokens: ApiTokenService,
    private readonly maxPageSize: number,
  ) {}

  @Authorized(TrustLevel.GUEST)
  @Query(() => User, { description: 'The user behind the token.' })
  me(@GqlCtx() { ctx, viewer }: GraphQLContext): Promise<User> {
    // `me` is a query: nothing in the request changed the user since it was read with the token.
    return viewer ? Promise.resolve(viewer) : this.userService.get(ctx, ctx.userId!);
  }

  @Authorized(TrustLevel.ADMIN)
  @Query(() => UserConnection)
  async users(
    @Args() { first, after }: ConnectionArgs,
    @Arg('trust', () => TrustLevel, { nullable: true }) trust: TrustLevel | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ConnectionShape<User>> {
    return toConnection(await this.userService.findMany(ctx, toPageArgs(first, after, this.maxPageSize), trust));
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => User)
  user(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<User> {
    return this.userService.getVisible(ctx, id);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => User)
  createUser(@Arg('input') input: CreateUserInput, @GqlCtx() { ctx }: GraphQLContext): Promise<User> {
    return this.userService.create(ctx, input);
  }

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => User, { description: 'Changes the display name of a user (yourself, or someone whose trust you may change).' })
  renameUser(@Args() { userId, displayName }: RenameUserArgs, @GqlCtx() { ctx }: GraphQLContext): Promise<User> {
    return this.userService.rename(ctx, userId, displayName);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => User)
  setUserTrust(
    @Arg('userId', () => ID) userId: string,
    @Arg('trust', () => TrustLevel) trust: TrustLevel,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<User> {
    return this.userService.setTrust(ctx, userId, trust);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => Identity)
  linkIdentity(@Arg('input') input: LinkIdentityInput, @GqlCtx() { ctx }: GraphQLContext): Promise<Identity> {
    return this.userService.linkIdentity(ctx, input.userId, input.channel, input.handle, input.displayName);
  }

  @Authorized(TrustLevel.OWNER)
  @Mutation(() => Boolean, { description: 'Deletes a user with their identities, tokens, sessions, messages, memories, beats and usage (OWNER). CONFLICT for yourself and the last OWNER.' })
  deleteUser(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.userService.delete(ctx, id);
  }

  @FieldResolver(() => [Identity])
  identities(@Root() user: User, @GqlCtx() { loaders }: GraphQLContext): Promise<Identity[]> {
    return loaders.identitiesByUser.load(user.id);
  }

  @FieldResolver(() => [ApiToken], { description: 'Tokens of this user (own, or any for ADMIN and above); never the secret.' })
  apiTokens(@Root() user: User, @GqlCtx() { ctx }: GraphQLContext): Promise<ApiToken[]> {
    return this.tokens.listForUser(ctx, user.id);
  }
}
