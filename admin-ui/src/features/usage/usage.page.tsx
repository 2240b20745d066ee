import { useMemo, useState } from 'react';
import { UsageDocument, UserChoicesDocument, type UsageGrouping } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { fmtNum, fmtUsd } from '../../lib/format';
import { Card, Empty, PageHeader, QueryView } from '../../components/ui';
import { BarChart, dayRange } from '../../components/charts';
import { BudgetsCard } from './budgets-card';

const GROUPS: Array<[UsageGrouping, string]> = [
  ['DAY', 'Day'],
  ['USER', 'User'],
  ['MODEL', 'Model'],
  ['SESSION', 'Session'],
];

export function UsagePage() {
  const [days, setDays] = useState(30);
  const [groupBy, setGroupBy] = useState<UsageGrouping>('DAY');
  const range = useMemo(() => {
    const to = new Date(Date.now() + 60_000);
    return { from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString() };
  }, [days]);
  const q = useQuery(UsageDocument, { ...range, groupBy });
  const users = useQuery(UserChoicesDocument, {}, { skip: groupBy !== 'USER' });
  const nameOf = (key: string) => (groupBy === 'USER' ? (users.data?.users.edges.find((e) => e.node.id === key)?.node.displayName ?? `…${key.slice(-8)}`) : groupBy === 'SESSION' ? `…${key.slice(-8)}` : key);
  return (
    <>
      <PageHeader
        title="Usage"
        subtitle="Model calls, tokens and their cost, by day, user, model or session; what each user may spend."
        actions={
          <>
            <label className="field">
              Period
              <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
                <option value={7}>7 days</option>
                <option value={30}>30 days</option>
                <option value={90}>90 days</option>
              </select>
            </label>
            <label className="field">
              Group by
              <select value={groupBy} onChange={(e) => setGroupBy(e.target.value as UsageGrouping)}>
                {GROUPS.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            </label>
          </>
        }
      />
      <QueryView q={q}>
        {(d) => {
          const rows = groupBy === 'DAY' ? dayRange(new Date(range.from), new Date(range.to)).map((day) => d.usage.find((u) => u.key === day) ?? { key: day, calls: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, estimated: false, costUsd: 0, unpricedCalls: 0 }) : [...d.usage].sort((a, b) => b.costUsd - a.costUsd || b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens)).slice(0, 20);
          const labels = rows.map((r) => (groupBy === 'DAY' ? r.key.slice(5) : nameOf(r.key)));
          const total = d.usage.reduce((s, u) => s + u.inputTokens + u.outputTokens, 0);
          const cost = d.usage.reduce((s, u) => s + u.costUsd, 0);
          const unpriced = d.usage.reduce((s, u) => s + u.unpricedCalls, 0);
          return (
            <div className="stack">
              {!d.usage.length ? <Empty title="No usage in this period">Model calls are counted here once the assistant answers.</Empty> : null}
              {unpriced ? (
                <div className="alert info" role="note">
                  {fmtNum(unpriced)} calls in this period were of models without a price (<code>pricing</code> in the config): their tokens are counted, their cost is not. <code>muninn doctor</code> lists them.
                </div>
              ) : null}
              <div className="grid cols-2">
                <Card title={`Cost · ${fmtUsd(cost)}`}>
                  <BarChart title="Cost in USD" labels={labels} series={[{ name: 'USD', values: rows.map((r) => r.costUsd) }]} format={fmtUsd} empty="No cost in this period." />
                </Card>
                <Card title={`Tokens · ${fmtNum(total)}`}>
                  <BarChart
                    title="Tokens"
                    labels={labels}
                    series={[
                      { name: 'input', values: rows.map((r) => r.inputTokens) },
                      { name: 'output', values: rows.map((r) => r.outputTokens) },
                      { name: 'cache read', values: rows.map((r) => r.cacheReadTokens) },
                    ]}
                    empty="No tokens in this period."
                  />
                </Card>
              </div>
              {d.usage.length ? (
              <Card title="Details">
                <div className="table-wrap">
                  <table>
                    <thead>
                      <tr>
                        <th>{GROUPS.find((g) => g[0] === groupBy)![1]}</th>
                        <th className="num">Calls</th>
                        <th className="num">Input</th>
                        <th className="num">Output</th>
                        <th className="num">Cache read</th>
                        <th className="num">Cache write</th>
                        <th className="num">Cost</th>
                      </tr>
                    </thead>
                    <tbody>
                      {d.usage.map((u) => (
                        <tr key={u.key}>
                          <td>
                            {nameOf(u.key)}
                            {u.estimated ? <span className="small muted"> (estimated)</span> : null}
                          </td>
                          <td className="num">{fmtNum(u.calls)}</td>
                          <td className="num">{fmtNum(u.inputTokens)}</td>
                          <td className="num">{fmtNum(u.outputTokens)}</td>
                          <td className="num">{fmtNum(u.cacheReadTokens)}</td>
                          <td className="num">{fmtNum(u.cacheWriteTokens)}</td>
                          <td className="num">
                            {fmtUsd(u.costUsd)}
                            {u.unpricedCalls ? <span className="small muted" title="calls of models without a price"> +{u.unpricedCalls} unpriced</span> : null}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </Card>
              ) : null}
            </div>
          );
        }}
      </QueryView>
      <div style={{ marginTop: 16 }}>
        <BudgetsCard />
      </div>
    </>
  );
}
