import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Args, Authorized, Ctx as GqlCtx, Field, FieldResolver, ID, Info, InputType, Query, Resolver, Root } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { toPageArgs } from '../../common/pagination';
import { Message, Session, SessionService, SessionStatus } from '../../modules/sessions';
import { User } from '../../modules/users';
import { Connection, ConnectionArgs, selectedFields, toConnection, type ConnectionShape } from '../connection';
import type { GraphQLContext } from '../context';

const SessionConnection = Connection(Session);

/** Session fields answered by this resolver's field resolvers rather than a column. */
const SESSION_RESOLVED = new Set(['title', 'user']);
const MessageConnection = Connection(Message);

@InputType()
class SessionFilter {
  @Field(() => ID, { nullable: true, description: 'Only sessions of this user (ADMIN and above for others).' })
  userId?: string | null;

  @Field(() => SessionStatus, { nullable: true })
  status?: SessionStatus | null;

  @Field(() => String, { nullable: true })
  channel?: string | null;

  @Field(() => String, { nullable: true })
  key?: string | null;
}

@Resolver(() => Session)
export class SessionResolver {
  constructor(
    private readonly sessionService: SessionService,
    private readonly maxPageSize: number,
  ) {}

  @Authorized(TrustLevel.MEMBER)
  @Query(() => SessionConnection)
  async sessions(
    @Args() { first, after }: ConnectionArgs,
    @Arg('filter', () => SessionFilter, { nullable: true }) filter: SessionFilter | null,
    @GqlCtx() { ctx }: GraphQLContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<ConnectionShape<Session>> {
    // Only the columns the query asks for; this type's own resolvers need the id and the user (read with the page).
    const fields = selectedFields(info, ['edges', 'node'])?.filter((f) => !SESSION_RESOLVED.has(f));
    const userFields = selectedFields(info, ['edges', 'node', 'user']);
    // Counted only when asked for (a name in the selection, even one a directive may skip, counts).
    const count = selectedFields(info, [])?.includes('totalCount') ?? true;
    return toConnection(await this.sessionService.findMany(ctx, filter ?? {}, toPageArgs(first, after, this.maxPageSize), { withUsers: true, fields, userFields, count }));
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => Session)
  session(@Arg('id', () => ID) id: string, @GqlCtx() { ctx }: GraphQLContext): Promise<Session> {
    return this.sessionService.getVisible(ctx, id);
  }

  @Authorized(TrustLevel.MEMBER)
  @Query(() => MessageConnection, { description: 'Messages of a session, oldest first.' })
  async messages(
    @Arg('sessionId', () => ID) sessionId: string,
    @Args() { first, after }: ConnectionArgs,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<ConnectionShape<Message>> {
    return toConnection(await this.sessionService.messages(ctx, sessionId, toPageArgs(first, after, this.maxPageSize)));
  }

  @FieldResolver(() => String, { nullable: true, description: 'The first user message, on one line and shortened (a title for lists); null before the first message.' })
  title(@Root() session: Session, @GqlCtx() { ctx }: GraphQLContext): Promise<string | null> {
    return this.sessionService.title(ctx, session.id);
  }

  /** The user read with a page of sessions (an answer without a wait per session), else through the loader. */
  @FieldResolver(() => User, { nullable: true })
  user(@Root() session: Session, @GqlCtx() { loaders }: GraphQLContext): User | null | Promise<User | null> {
    if (session.user !== undefined) return session.user;
    return session.userId ? loaders.userById.load(session.userId) : null;
  }
}
