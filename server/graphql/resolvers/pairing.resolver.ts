import { Arg, Authorized, Ctx as GqlCtx, FieldResolver, Mutation, Query, Resolver, Root } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { PairingRequest, PairingService, PairingStatus } from '../../modules/pairing';
import { User } from '../../modules/users';
import type { GraphQLContext } from '../context';

/** Pairing requests of unknown DM senders and their approval (DESIGN §3); ADMIN and above. */
@Resolver(() => PairingRequest)
export class PairingResolver {
  constructor(private readonly pairing: PairingService) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [PairingRequest], { description: 'Pairing requests, newest first (at most 200); null status lists all.' })
  pairingRequests(
    @Arg('status', () => PairingStatus, { nullable: true }) status: PairingStatus | null,
    @GqlCtx() { ctx }: GraphQLContext,
  ): Promise<PairingRequest[]> {
    return this.pairing.list(ctx, status ?? null);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => PairingRequest, {
    description: 'Lets the sender in as a MEMBER (or links their existing user) and tells them. NOT_FOUND for an unknown code, CONFLICT for an expired or decided one.',
  })
  async approvePairing(@Arg('code') code: string, @GqlCtx() { ctx }: GraphQLContext): Promise<PairingRequest> {
    return (await this.pairing.approve(ctx, code)).request;
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => PairingRequest, { description: 'Turns the request down; the sender is not told.' })
  denyPairing(@Arg('code') code: string, @GqlCtx() { ctx }: GraphQLContext): Promise<PairingRequest> {
    return this.pairing.deny(ctx, code);
  }

  @FieldResolver(() => User, { nullable: true, description: 'The user created or linked on approval.' })
  user(@Root() request: PairingRequest, @GqlCtx() { loaders }: GraphQLContext): Promise<User | null> | null {
    return request.userId ? loaders.userById.load(request.userId) : null;
  }
}
