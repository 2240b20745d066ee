import { useMemo } from 'react';
import { OverviewDocument } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { fmtNum } from '../../lib/format';
import { Badge, Card, ErrorBox, Loading, PageHeader, QueryView } from '../../components/ui';
import { BarChart, dayRange } from '../../components/charts';
import { useReadiness } from './use-readiness';
import { QueueDepths } from './queue-depths';
import { RecentErrors } from './recent-errors';
import { ChannelRows, ProviderRows, ServerFacts } from './health-rows';

const DAYS = 14;

export function OverviewPage() {
  const range = useMemo(() => {
    const to = new Date(Date.now() + 60_000);
    const from = new Date(to.getTime() - DAYS * 86_400_000);
    return { from: from.toISOString(), to: to.toISOString() };
  }, []);
  const q = useQuery(OverviewDocument, range, { pollMs: 10_000 });
  const ready = useReadiness();
  return (
    <>
      <PageHeader title="Overview" subtitle="Health, live queues and usage of this server." />
      <div className="stack">
        <div className="grid cols-2">
          <Card title="Health">
            {ready.error ? <ErrorBox error={new Error(ready.error)} /> : null}
            {!ready.data && !ready.error ? <Loading /> : null}
            {ready.data ? (
              <table>
                <tbody>
                  {Object.entries(ready.data.checks).map(([name, state]) => (
                    <tr key={name}>
                      <td>{name}</td>
                      <td className="num">
                        <Badge value={state} />
                      </td>
                    </tr>
                  ))}
                  <ProviderRows />
                  <ChannelRows channels={q.data?.channels} />
                </tbody>
              </table>
            ) : null}
            <ServerFacts />
            <RecentErrors />
          </Card>
          <Card title="Queues">
            <QueueDepths />
          </Card>
        </div>
        <QueryView q={q}>
          {(d) => {
            const days = dayRange(new Date(range.from), new Date(range.to)).slice(-DAYS);
            const by = new Map(d.usage.map((u) => [u.key, u]));
            const total = d.usage.reduce((s, u) => ({ calls: s.calls + u.calls, tokens: s.tokens + u.inputTokens + u.outputTokens }), { calls: 0, tokens: 0 });
            return (
              <>
                <div className="grid cols-4">
                  <Card>
                    <div className="muted small">Users</div>
                    <div className="stat">{d.users.totalCount}</div>
                  </Card>
                  <Card>
                    <div className="muted small">Model calls ({DAYS} days)</div>
                    <div className="stat">{fmtNum(total.calls)}</div>
                  </Card>
                  <Card>
                    <div className="muted small">Tokens ({DAYS} days)</div>
                    <div className="stat">{fmtNum(total.tokens)}</div>
                  </Card>
                </div>
                <div className="grid cols-2">
                  <Card title="Model calls per day">
                    <BarChart title="Model calls per day" labels={days.map((x) => x.slice(5))} series={[{ name: 'calls', values: days.map((x) => by.get(x)?.calls ?? 0) }]} />
                  </Card>
                  <Card title="Tokens per day">
                    <BarChart
                      title="Tokens per day"
                      labels={days.map((x) => x.slice(5))}
                      series={[
                        { name: 'input', values: days.map((x) => by.get(x)?.inputTokens ?? 0) },
                        { name: 'output', values: days.map((x) => by.get(x)?.outputTokens ?? 0) },
                      ]}
                    />
                  </Card>
                </div>
              </>
            );
          }}
        </QueryView>
      </div>
    </>
  );
}
