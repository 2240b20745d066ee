import { useState } from 'react';
import { ModelProvidersDocument, TestModelProviderDocument, type ProviderFieldsFragment, type TestModelProviderMutation } from '../../gql/graphql';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, Empty, ErrorBox, PageHeader, QueryView, TableHead } from '../../components/ui';
import { ProviderHealthBadge } from './provider-health-badge';
import { MockModelBanner } from './mock-model-banner';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${Math.round(x * 100)} %`);
const ms = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${x.toLocaleString()} ms`);

function ProviderCard({ p, onTested }: { p: ProviderFieldsFragment; onTested(): void }) {
  const test = useMutation(TestModelProviderDocument);
  const [result, setResult] = useState<TestModelProviderMutation['testModelProvider'] | null>(null);
  const run = async () => {
    setResult(null);
    const r = await test.run({ name: p.name });
    if (r) setResult(r.testModelProvider);
    onTested();
  };
  return (
    <Card
      title={p.name}
      className="provider"
      actions={
        <div className="row">
          <ProviderHealthBadge health={p.health} />
          <button className="small" onClick={run} disabled={test.busy} aria-label={`Test ${p.name}`}>
            {test.busy ? 'Testing…' : 'Test'}
          </button>
        </div>
      }
    >
      <dl className="facts" data-provider={p.name}>
        <dt>Kind</dt>
        <dd>{p.kind}</dd>
        <dt>Base URL</dt>
        <dd className="mono">{p.baseUrl ?? '–'}</dd>
        <dt>Probe</dt>
        <dd>
          {p.probeError ? <span className="danger-text">{p.probeError}</span> : `answered in ${ms(p.probeMs)}`} <span className="muted small">({fmtAgo(p.checkedAt)})</span>
        </dd>
        <dt>Recent calls</dt>
        <dd>{p.recentCalls}</dd>
        <dt>Error rate</dt>
        <dd>{pct(p.errorRate)}</dd>
        <dt>Latency</dt>
        <dd>
          {ms(p.avgLatencyMs)} mean · {ms(p.p95LatencyMs)} p95
        </dd>
        <dt>Last error</dt>
        <dd>{p.lastError ? <span className="danger-text">{p.lastError} <span className="muted small">({fmtAgo(p.lastErrorAt)})</span></span> : 'none'}</dd>
        <dt>Serves</dt>
        <dd>
          {p.routes.length ? (
            <div className="row">
              {p.routes.map((r) => (
                <Badge key={`${r.role}-${r.position}`} value={`${r.role}${r.position ? ` (fallback ${r.position})` : ''}: ${r.model}`} tone={r.position ? '' : 'accent'} />
              ))}
            </div>
          ) : (
            'no role'
          )}
        </dd>
      </dl>
      <ErrorBox error={test.error} />
      {result ? (
        <div className={result.ok ? 'alert ok' : 'alert'} role="status">
          {result.ok ? `Test passed in ${ms(result.latencyMs)} (${result.model}): “${result.reply ?? ''}”` : `Test failed after ${ms(result.latencyMs)}: ${result.error}`}
        </div>
      ) : null}
    </Card>
  );
}

/** Providers & models: every provider's health, latency and errors, the routes of each role, a test call. */
export function ModelsPage() {
  const [fresh, setFresh] = useState(false);
  const q = useQuery(ModelProvidersDocument, { fresh }, { pollMs: 15_000 });
  return (
    <>
      <PageHeader
        title="Providers & models"
        subtitle="Health of each model provider (a cheap probe of its model list), its recent calls, and where each agent role goes."
        actions={
          <button onClick={() => (fresh ? void q.refetch() : setFresh(true))} disabled={q.loading}>
            Check now
          </button>
        }
      />
      <QueryView q={q} empty={(d) => (d.modelProviders.length ? null : <Empty title="No model provider">Add one under ai.providers in muninn.json, or set MUNINN_MODEL_BASE_URL.</Empty>)}>
        {(d) => (
          <div className="stack">
            {d.serverInfo.usingMockModel ? <MockModelBanner /> : null}
            {q.error ? <ErrorBox error={q.error} /> : null}
            <div className="grid cols-2">
              {d.modelProviders.map((p) => (
                <ProviderCard key={p.name} p={p} onTested={() => void q.refetch()} />
              ))}
            </div>
            <Card title="Roles and fallbacks">
              <div className="table-wrap">
                <table aria-label="Model roles">
                  <TableHead columns={['Role', 'Primary', 'Fallbacks']} />
                  <tbody>
                    {['main', 'summarizer', 'heartbeat', 'embeddings'].map((role) => {
                      const routes = d.modelRoles.filter((r) => r.role === role).sort((a, b) => a.position - b.position);
                      const health = (name: string) => d.modelProviders.find((p) => p.name === name)?.health;
                      const label = (r: (typeof routes)[number]) => (
                        <span key={r.position} className="row">
                          <span className="mono">
                            {r.provider}/{r.model}
                          </span>
                          {health(r.provider) ? <ProviderHealthBadge health={health(r.provider)!} /> : null}
                        </span>
                      );
                      return (
                        <tr key={role}>
                          <td>{role}</td>
                          <td>{routes[0] ? label(routes[0]) : '–'}</td>
                          <td>{routes.length > 1 ? <div className="stack">{routes.slice(1).map(label)}</div> : <span className="muted">none</span>}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </Card>
          </div>
        )}
      </QueryView>
    </>
  );
}
