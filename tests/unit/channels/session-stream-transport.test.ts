/** The web and TUI channels (session-event transports) through the shared transport suite. */
import { ChatClient, SessionStreamTransport } from '../../../server/channels/web/session-stream-transport';
import { describeChannelTransportConformance } from '../../support/conformance/channel-transport.conformance';

for (const channel of [ChatClient.WEB, ChatClient.TUI]) {
  for (const enabled of [true, false]) {
    describeChannelTransportConformance(`${channel} (${enabled ? 'enabled' : 'disabled'})`, async () => ({
      transport: new SessionStreamTransport(channel, enabled),
      reported: [],
      runningState: 'CONNECTED',
      connect: async () => undefined,
      sessionEvents: { enabled },
      close: async () => undefined,
    }));
  }
}
