import { useState } from 'react';
import { QueueJobsDocument, RemoveJobDocument, RetryJobDocument, type JobState } from '../../gql/graphql';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { useRouter } from '../../lib/router';
import { failureText, fmtAgo, fmtDate } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView, TableHead } from '../../components/ui';

const STATES: Array<[JobState, string, 'waiting' | 'prioritized' | 'active' | 'delayed' | 'waitingChildren' | 'paused' | 'failed' | 'completed']> = [
  ['FAILED', 'Failed', 'failed'],
  ['ACTIVE', 'Running', 'active'],
  ['WAITING', 'Waiting', 'waiting'],
  ['PRIORITIZED', 'Prioritized', 'prioritized'],
  ['DELAYED', 'Delayed', 'delayed'],
  ['COMPLETED', 'Completed', 'completed'],
];

export function QueuesPage() {
  const { query } = useRouter();
  const [state, setState] = useState<JobState>('FAILED');
  const [only, setOnly] = useState(query.get('queue') ?? '');
  const q = useQuery(QueueJobsDocument, { state, first: 25 }, { pollMs: 3000 });
  const retry = useMutation(RetryJobDocument);
  const remove = useMutation(RemoveJobDocument);
  return (
    <>
      <PageHeader
        title="Queues"
        subtitle="Background jobs per queue and state (live). Failed jobs can be retried or removed."
        actions={
          <label className="field">
            Queue
            <select value={only} onChange={(e) => setOnly(e.target.value)}>
              <option value="">All queues</option>
              {q.data?.queues.map((x) => (
                <option key={x.name}>{x.name}</option>
              ))}
            </select>
          </label>
        }
      />
      <div className="stack">
        <div className="row" role="tablist" aria-label="Job state">
          {STATES.map(([s, label, key]) => {
            const n = q.data?.queues.filter((x) => !only || x.name === only).reduce((sum, x) => sum + x.counts[key], 0);
            return (
              <button key={s} role="tab" aria-selected={state === s} className={state === s ? 'primary' : ''} onClick={() => setState(s)}>
                {label} {n !== undefined ? <span className="badge">{n}</span> : null}
              </button>
            );
          })}
        </div>
        <ErrorBox error={retry.error ?? remove.error} />
        <QueryView q={q}>
          {(d) => {
            const queues = d.queues.filter((x) => !only || x.name === only);
            const jobs = queues.flatMap((x) => x.jobs);
            return (
              <Card title={`${STATES.find((x) => x[0] === state)![1]} jobs`}>
                {!jobs.length ? (
                  <Empty title={`No ${state.toLowerCase()} jobs`}>{state === 'FAILED' ? 'Everything that ran, worked.' : null}</Empty>
                ) : (
                  <div className="table-wrap">
                    <table aria-label="Jobs">
                      <TableHead columns={['Job', 'Queue', { label: 'Attempts', num: true }, 'Created', 'Finished', 'Reason', '']} />
                      <tbody>
                        {jobs.map((j) => (
                          <tr key={`${j.queue}:${j.id}`} data-job={j.id}>
                            <td>
                              <strong>{j.name}</strong>
                              <div className="small muted mono">{j.id.length > 24 ? `${j.id.slice(0, 24)}…` : j.id}</div>
                            </td>
                            <td className="mono small" style={{ whiteSpace: 'nowrap' }}>
                              {j.queue}
                            </td>
                            <td className="num">
                              {j.attemptsMade}/{j.maxAttempts}
                            </td>
                            <td title={fmtDate(j.createdAt)}>{fmtAgo(j.createdAt)}</td>
                            <td>{fmtDate(j.finishedAt)}</td>
                            <td className="small" style={{ maxWidth: 360, overflowWrap: 'anywhere' }}>
                              {j.failedReason ? <span style={{ color: 'var(--danger)' }} title={j.failedReason}>{failureText(j.failedReason)}</span> : <Badge value={j.state.toLowerCase()} />}
                            </td>
                            <td>
                              <div className="row" style={{ flexWrap: 'nowrap' }}>
                                {j.state === 'FAILED' ? (
                                  <button className="small primary" disabled={retry.busy} onClick={async () => void ((await retry.run({ queue: j.queue, id: j.id })) && (await q.refetch()))}>
                                    Retry
                                  </button>
                                ) : null}
                                {j.state !== 'ACTIVE' ? (
                                  <ConfirmButton danger label="Remove" title="Remove this job?" body={`${j.name} (${j.queue}) is deleted from the queue.`} confirmLabel="Remove" onConfirm={async () => void ((await remove.run({ queue: j.queue, id: j.id })) && (await q.refetch()))} />
                                ) : null}
                              </div>
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                )}
              </Card>
            );
          }}
        </QueryView>
      </div>
    </>
  );
}
