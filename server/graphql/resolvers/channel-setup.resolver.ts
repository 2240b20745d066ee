import { Arg, Authorized, Ctx as GqlCtx, Field, ID, Mutation, ObjectType, Query, Resolver, registerEnumType } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import type { ChannelSetupService, ChannelSetupSource as SourceName, ChannelSetupSummary, SetupChannel } from '../../modules/channel-setup';
import type { GraphQLContext } from '../context';

enum ChannelSetupSource {
  CONSOLE = 'CONSOLE',
  CONFIG = 'CONFIG',
  NONE = 'NONE',
}
registerEnumType(ChannelSetupSource, {
  name: 'ChannelSetupSource',
  description: 'Where a channel\'s settings come from: CONSOLE (entered here, stored encrypted; wins), CONFIG (the config file or env), NONE (not set up).',
});

@ObjectType('ChannelSetup', { description: 'How a platform channel (telegram, whatsapp) is set up. Secrets are never returned.' })
class ChannelSetupType implements ChannelSetupSummary {
  @Field(() => String) channel!: SetupChannel;
  @Field(() => ChannelSetupSource) source!: SourceName;
  @Field({ description: 'Whether a bot token is stored or configured (the token itself is never shown).' }) secretSet!: boolean;
  @Field(() => String, { nullable: true, description: 'What may be shown: the bot\'s @username.' }) label!: string | null;
  @Field(() => Date, { nullable: true }) updatedAt!: Date | null;
  @Field(() => ID, { nullable: true }) updatedById!: string | null;
}

/** Telegram and WhatsApp set up from the console: read by ADMINs, changed by OWNERs, applied without a restart. */
@Resolver()
export class ChannelSetupResolver {
  constructor(private readonly setups: ChannelSetupService) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [ChannelSetupType], { description: 'Telegram and WhatsApp: where their settings come from and whether a bot token is set.' })
  channelSetups(@GqlCtx() { ctx }: GraphQLContext): Promise<ChannelSetupSummary[]> {
    return this.setups.list(ctx);
  }

  @Authorized(TrustLevel.OWNER)
  @Mutation(() => ChannelSetupType, {
    description: 'Stores a Telegram bot token (checked with getMe first, encrypted at rest, never returned) and turns the channel on; it starts without a restart (audited).',
  })
  setTelegramBot(@Arg('botToken') botToken: string, @GqlCtx() { ctx }: GraphQLContext): Promise<ChannelSetupSummary> {
    return this.setups.setTelegramBot(ctx, botToken, ctx.signal);
  }

  @Authorized(TrustLevel.OWNER)
  @Mutation(() => ChannelSetupType, { description: 'Turns WhatsApp on; scan the QR that `channels` then shows with WhatsApp → Linked devices (audited).' })
  enableWhatsApp(@GqlCtx() { ctx }: GraphQLContext): Promise<ChannelSetupSummary> {
    return this.setups.enableWhatsApp(ctx);
  }

  @Authorized(TrustLevel.OWNER)
  @Mutation(() => Boolean, { description: 'Forgets the console\'s settings of telegram or whatsapp; the config file\'s apply again (audited). False when there were none.' })
  removeChannelSetup(@Arg('channel') channel: string, @GqlCtx() { ctx }: GraphQLContext): Promise<boolean> {
    return this.setups.remove(ctx, channel);
  }
}
