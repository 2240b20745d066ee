import DataLoader from 'dataloader';
import type { Ctx } from '../common/ctx';
import type { Identity, User, UserService } from '../modules/users';

/** Per-request batch loaders, so lists of nodes do not query their relations one by one. */
export interface Loaders {
  identitiesByUser: DataLoader<string, Identity[]>;
  userById: DataLoader<string, User | null>;
}

/** Subscription sources; a subscription's `subscribe` function has no resolver instance to call. */
export interface GraphQLStreams {
  /** Checks that the actor may read the session, then yields its events after `afterSeq`. */
  sessionEvents(ctx: Ctx, sessionId: string, afterSeq: number): Promise<AsyncIterable<unknown>>;
  /** Status changes of this process's channels (ADMIN and above); absent where no channels run. */
  channelStatus?(ctx: Ctx): AsyncIterable<unknown>;
  /** Beat runs the actor may see (own beats; everyone's for ADMIN), optionally of one beat. */
  beatRuns?(ctx: Ctx, beatId: string | null): Promise<AsyncIterable<unknown>>;
  /** Updates of one background job (ADMIN and above) until it completes or fails. */
  jobProgress?(ctx: Ctx, jobId: string): Promise<AsyncIterable<unknown>>;
}

/** What every resolver receives. */
export interface GraphQLContext {
  streams?: GraphQLStreams;
  ctx: Ctx;
  loaders: Loaders;
  /** The acting user as read with the token at the start of this request (HTTP) or operation (WS). */
  viewer?: User;
  /** Why authentication failed, when a token was sent but not accepted. */
  authError?: string;
}

export function createLoaders(ctx: Ctx, users: UserService): Loaders {
  return {
    identitiesByUser: new DataLoader((ids) => users.identitiesOf(ctx, ids)),
    userById: new DataLoader((ids) => users.usersByIds(ctx, ids)),
  };
}
