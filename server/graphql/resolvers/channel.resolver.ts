import { Authorized, Ctx as GqlCtx, Field, ObjectType, Query, Resolver, Root, Subscription, registerEnumType } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import type { ChannelState as ChannelStateName } from '../../channels/channel.types';
import type { ChannelInfo, ChannelOverview } from '../../channels/policies/channel-overview';
import type { GraphQLContext } from '../context';

/** GraphQL form of the transport states (values equal the domain's `ChannelState` strings). */
enum ChannelState {
  STOPPED = 'STOPPED',
  STARTING = 'STARTING',
  CONNECTED = 'CONNECTED',
  POLLING = 'POLLING',
  WEBHOOK = 'WEBHOOK',
  NEEDS_LINK = 'NEEDS_LINK',
  ERROR = 'ERROR',
}
registerEnumType(ChannelState, { name: 'ChannelState', description: 'Connection state of a channel; NEEDS_LINK: WhatsApp waits for a QR scan.' });

// Compile-time check that both spellings list the same states.
type SameStates = [`${ChannelState}`] extends [ChannelStateName] ? ([ChannelStateName] extends [`${ChannelState}`] ? true : false) : false;
const _sameStates: SameStates = true;

@ObjectType('ChannelStatus', { description: 'One channel: Telegram and WhatsApp transports of this process, plus web and TUI.' })
class ChannelStatusType implements ChannelInfo {
  @Field()
  name!: string;

  @Field({ description: 'Transports: the channel:<name> plugin setting (default on). Web and TUI: their config.' })
  enabled!: boolean;

  @Field(() => ChannelState)
  state!: ChannelStateName;

  @Field(() => String, { nullable: true })
  lastError!: string | null;

  @Field(() => String, { nullable: true, description: 'WhatsApp linking QR (text) while state is NEEDS_LINK.' })
  qr!: string | null;

  @Field()
  updatedAt!: Date;
}

/** Channel status for ADMINs; switching a channel on or off is `setPluginSetting({ plugin: "channel:<name>" })`. */
@Resolver()
export class ChannelResolver {
  constructor(private readonly overview: ChannelOverview) {}

  @Authorized(TrustLevel.ADMIN)
  @Query(() => [ChannelStatusType], { description: 'Every channel with its state, last error and WhatsApp QR while linking.' })
  channels(@GqlCtx() { ctx }: GraphQLContext): Promise<ChannelInfo[]> {
    return this.overview.list(ctx);
  }

  @Authorized(TrustLevel.ADMIN)
  @Subscription(() => ChannelStatusType, {
    description: 'Status changes of the platform channels (connected, polling, webhook, errors, QR) from now on.',
    subscribe: ({ context }) => {
      const { ctx, streams } = context as GraphQLContext;
      if (!streams?.channelStatus) throw new Error('channel status is not available on this server');
      return streams.channelStatus(ctx);
    },
  })
  channelStatus(@Root() info: ChannelInfo): ChannelInfo {
    return info;
  }
}
