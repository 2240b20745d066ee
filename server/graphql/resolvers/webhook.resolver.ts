import { Arg, Authorized, Ctx as GqlCtx, Field, FieldResolver, ID, InputType, Int, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import { Webhook, WebhookDelivery, WebhookService } from '../../modules/webhooks';
import type { GraphQLContext } from '../context';

@InputType({ description: 'A new webhook. Without a target the result goes to the owner\'s principal chat.' })
class CreateWebhookInput {
  @Field({ description: 'The last part of POST /hooks/<name>: lowercase letters, digits, - and _.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'What the assistant should do with each call, e.g. "Summarise the CI result; say who broke the build."' })
  instructions?: string | null;

  @Field(() => ID, { nullable: true, description: 'Whose trust the turn runs with; default you. Not someone with more trust than you.' })
  ownerId?: string | null;

  @Field(() => String, { nullable: true, description: 'telegram, whatsapp, web or tui (with targetChatId).' })
  targetChannel?: string | null;

  @Field(() => String, { nullable: true, description: 'The chat on targetChannel: a Telegram chat id, a WhatsApp JID, or a user id for web/tui.' })
  targetChatId?: string | null;
}

@ObjectType({ description: 'A created webhook with its secret, which is shown only this once.' })
class CreatedWebhook {
  @Field(() => Webhook) webhook!: Webhook;
  @Field({ description: 'Send it as "Authorization: Bearer <secret>". Only its hash is stored.' }) secret!: string;
  @Field({ description: 'Where to POST, relative to the server: /hooks/<name>.' }) path!: string;
}

/** Webhooks (ADMIN and above): list with deliveries, create (secret shown once), enable/disable, rotate, delete. */
@Resolver(() => Webhook)
export class WebhookResolver {
  constructor(private readonly service: WebhookService) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [Webhook], { description: 'Every webhook, by name (never their secrets).' })
  webhooks(@GqlCtx() { ctx }: GraphQLContext): Promise<Webhook[]> {
    return this.service.list(ctx);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => CreatedWebhook)
  async createWebhook(@Arg('input', () => CreateWebhookInput) input: CreateWebhookInput, @GqlCtx() { ctx }: GraphQLContext): Promise<CreatedWebhook> {
    const { webhook, secret } = await this.service.create(ctx, input);
    return Object.assign(new CreatedWebhook(), { webhook, secret, path: `/hooks/${webhook.name}` });
  }

  @Authorized(TrustLevel.ADMIN)
  @FieldResolver(() => [WebhookDelivery], { description: 'The newest accepted calls (at most 50), newest first, with the turn each started.' })
  deliveries(@Root() hook: Webhook, @Arg('first', () => Int, { defaultValue: 10 }) first: number, @GqlCtx() { ctx }: GraphQLContext): Promise<WebhookDelivery[]> {
    return this.service.deliveries(ctx, hook, first);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => Webhook, { description: 'Switches a webhook off (its calls get 401) or on again (audited).' })
  setWebhookEnabled(@Arg('name') name: string, @Arg('enabled') enabled: boolean, @GqlCtx() { ctx }: GraphQLContext): Promise<Webhook> {
    return this.service.setEnabled(ctx, name, enabled);
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => CreatedWebhook, { description: 'Gives a webhook a new secret, shown only in this answer; the old secret stops working at once (audited).' })
  async rotateWebhookSecret(@Arg('name') name: string, @GqlCtx() { ctx }: GraphQLContext): Promise<CreatedWebhook> {
    const { webhook, secret } = await this.service.rotateSecret(ctx, name);
    return Object.assign(new CreatedWebhook(), { webhook, secret, path: `/hooks/${webhook.name}` });
  }

  @Authorized(TrustLevel.ADMIN)
  @Mutation(() => Boolean, { description: 'Deletes a webhook; calls to it get 401 from now on.' })
  deleteWebhook(@Arg('name') name: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.service.delete(ctx, name);
  }
}
