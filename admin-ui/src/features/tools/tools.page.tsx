import { useEffect } from 'react';
import { ChannelStatusLiveDocument, ChannelsDocument, SetPluginSettingDocument, ToolMatrixDocument } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, Empty, ErrorBox, PageHeader, QueryView, Switch, TableHead } from '../../components/ui';
import { QrCode } from './qr-code';

const CHANNELS = ['web', 'tui', 'telegram', 'whatsapp'] as const;

export function ToolsPage() {
  const { client } = useAuth();
  const matrix = useQuery(ToolMatrixDocument, {});
  const channels = useQuery(ChannelsDocument, {}, { pollMs: 15_000 });
  const set = useMutation(SetPluginSettingDocument);
  const { refetch } = channels;
  useEffect(() => {
    if (!client) return;
    return client.subscribe(ChannelStatusLiveDocument, {}, { next: () => void refetch() });
  }, [client, refetch]);
  const toggle = async (plugin: string, channel: string | null, enabled: boolean) => {
    if (await set.run({ input: { plugin, channel, enabled } })) await Promise.all([matrix.refetch(), channels.refetch()]);
  };
  return (
    <>
      <PageHeader title="Tools & channels" subtitle="Which tools the assistant may use on which channel, and the state of each channel." />
      <div className="stack">
        <ErrorBox error={set.error} />
        <Card title="Channels">
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
                          {c.state === 'NEEDS_LINK' && c.qr ? (
                            <div style={{ marginTop: 8 }}>
                              <div className="small muted">Scan in WhatsApp → Linked devices:</div>
                              <QrCode text={c.qr} />
                            </div>
                          ) : null}
                        </td>
                        <td>
                          <Badge value={c.state} />
                        </td>
                        <td className="small">{c.lastError ?? '–'}</td>
                        <td>{fmtAgo(c.updatedAt)}</td>
                        <td>
                          {c.name === 'telegram' || c.name === 'whatsapp' ? (
                            <Switch checked={c.enabled} label={`Channel ${c.name}`} disabled={set.busy} onChange={(v) => void toggle(`channel:${c.name}`, null, v)} />
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
        <Card title="Tools per channel">
          <QueryView q={matrix} empty={(d) => (d.global.length ? null : <Empty title="No tools" />)}>
            {(d) => (
              <div className="table-wrap">
                <table className="matrix" aria-label="Tool matrix">
                  <thead>
                    <tr>
                      <th>Tool</th>
                      <th>Everywhere</th>
                      {CHANNELS.map((c) => (
                        <th key={c}>{c}</th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {d.global.map((t) => (
                      <tr key={t.name}>
                        <td>
                          <strong className="mono">{t.name}</strong> <Badge value={t.minTrust} />
                          {t.requiresApproval ? <Badge value="approval" tone="warn" /> : null}
                          <div className="small muted">{t.description}</div>
                        </td>
                        <td>
                          <Switch checked={t.enabled} label={`${t.name} everywhere`} disabled={set.busy} onChange={(v) => void toggle(t.name, null, v)} />
                        </td>
                        {CHANNELS.map((c) => {
                          const on = d[c].find((x) => x.name === t.name)?.enabled ?? false;
                          return (
                            <td key={c}>
                              <Switch checked={on} label={`${t.name} on ${c}`} disabled={set.busy} onChange={(v) => void toggle(t.name, c, v)} />
                            </td>
                          );
                        })}
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
