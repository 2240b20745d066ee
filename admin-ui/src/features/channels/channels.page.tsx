import { useEffect } from 'react';
import { ChannelSetupListDocument, ChannelStatusLiveDocument, ChannelsDocument, SetChannelSwitchDocument } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, Empty, ErrorBox, Loading, PageHeader, QueryView, Switch, TableHead } from '../../components/ui';
import { TelegramCard, WhatsAppCard } from './channel-setup-cards';

/** Telegram and WhatsApp set up from the console (OWNER), and the state of every channel (ADMIN). */
export function ChannelsPage() {
  const { client, me } = useAuth();
  const channels = useQuery(ChannelsDocument, {}, { pollMs: 15_000 });
  const setups = useQuery(ChannelSetupListDocument, {});
  const set = useMutation(SetChannelSwitchDocument);
  const { refetch } = channels;
  useEffect(() => {
    if (!client) return;
    return client.subscribe(ChannelStatusLiveDocument, {}, { next: () => void refetch() });
  }, [client, refetch]);
  const refresh = () => Promise.all([channels.refetch(), setups.refetch()]);
  const toggle = async (name: string, enabled: boolean) => {
    if (await set.run({ input: { plugin: `channel:${name}`, channel: null, enabled } })) await channels.refetch();
  };
  const statusOf = (name: string) => channels.data?.channels.find((c) => c.name === name);
  const setupOf = (name: string) => setups.data?.channelSetups.find((s) => s.channel === name);
  const canEdit = trustAtLeast(me?.trust, 'OWNER');
  return (
    <>
      <PageHeader title="Channels" subtitle="Where people reach the assistant: connect Telegram and WhatsApp here, and see the state of every channel." />
      <div className="stack">
        <ErrorBox error={setups.error} onRetry={() => void setups.refetch()} />
        {setups.data ? (
          <div className="grid cols-2 setup-cards">
            <TelegramCard setup={setupOf('telegram')} status={statusOf('telegram')} canEdit={canEdit} onChanged={refresh} />
            <WhatsAppCard setup={setupOf('whatsapp')} status={statusOf('whatsapp')} canEdit={canEdit} onChanged={refresh} />
          </div>
        ) : setups.loading ? (
          <Loading label="Loading the channel set-up…" />
        ) : null}
        <ErrorBox error={set.error} />
        <Card title="All channels">
          <QueryView q={channels} empty={(d) => (d.channels.length ? null : <Empty title="No channels" />)}>
            {(d) => (
              <div className="table-wrap">
                <table aria-label="Channels">
                  <TableHead columns={['Channel', 'State', 'Last error', 'Changed', 'On']} />
                  <tbody>
                    {d.channels.map((c) => (
                      <tr key={c.name}>
                        <td>
                          <strong>{c.name}</strong>
                        </td>
                        <td>
                          <Badge value={c.state} />
                        </td>
                        <td className="small">{c.lastError ?? '–'}</td>
                        <td>{fmtAgo(c.updatedAt)}</td>
                        <td>
                          {c.name === 'telegram' || c.name === 'whatsapp' ? (
                            <Switch checked={c.enabled} label={`Channel ${c.name}`} disabled={set.busy} onChange={(v) => void toggle(c.name, v)} />
                          ) : (
                            <span className="small muted">{c.enabled ? 'on (config)' : 'off (config)'}</span>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </QueryView>
        </Card>
      </div>
    </>
  );
}
