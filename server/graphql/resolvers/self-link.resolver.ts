import { Authorized, Ctx as GqlCtx, Field, Mutation, ObjectType, Resolver } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import type { IdentityLinkService } from '../../modules/linking';
import type { GraphQLContext } from '../context';

@ObjectType({ description: 'A one-time code that links a Telegram or WhatsApp account to you: send "/link CODE" to the bot in a direct chat.' })
class LinkCode {
  @Field() code!: string;
  @Field(() => Date, { description: 'The code stops working then (10 minutes); a new code replaces it at once.' }) expiresAt!: Date;
  @Field({ description: 'What to send to the bot, e.g. "/link ABCD2345".' }) command!: string;
}

/** Self-service linking of a channel identity (MEMBER and above, for themselves). */
@Resolver()
export class SelfLinkResolver {
  constructor(private readonly links: IdentityLinkService) {}

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => LinkCode, { description: 'A code for linking one of your Telegram or WhatsApp accounts to you; the link is audited (identity.self_link).' })
  async createLinkCode(@GqlCtx() { ctx }: GraphQLContext): Promise<LinkCode> {
    const { code, expiresAt } = await this.links.createCode(ctx);
    return Object.assign(new LinkCode(), { code, expiresAt, command: `/link ${code}` });
  }
}
