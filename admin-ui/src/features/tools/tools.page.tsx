import { SetPluginSettingDocument, ToolMatrixDocument } from '../../gql/graphql';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { Badge, Card, Empty, ErrorBox, PageHeader, QueryView, Switch } from '../../components/ui';

const CHANNELS = ['web', 'tui', 'telegram', 'whatsapp'] as const;

export function ToolsPage() {
  const matrix = useQuery(ToolMatrixDocument, {});
  const set = useMutation(SetPluginSettingDocument);
  const toggle = async (plugin: string, channel: string | null, enabled: boolean) => {
    if (await set.run({ input: { plugin, channel, enabled } })) await matrix.refetch();
  };
  return (
    <>
      <PageHeader title="Tools" subtitle="Which tools the assistant may use, everywhere and on each channel. Channels themselves are set up on the Channels page." />
      <div className="stack">
        <ErrorBox error={set.error} />
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
