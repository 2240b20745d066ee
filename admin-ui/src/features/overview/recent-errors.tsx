import { QueueJobsDocument } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { failureText, fmtAgo } from '../../lib/format';
import { Link } from '../../lib/router';

/** The latest failed background jobs, newest first. */
export function RecentErrors() {
  const q = useQuery(QueueJobsDocument, { state: 'FAILED', first: 5 }, { pollMs: 10_000 });
  const jobs = (q.data?.queues.flatMap((x) => x.jobs) ?? []).sort((a, b) => (b.finishedAt ?? '').localeCompare(a.finishedAt ?? '')).slice(0, 5);
  return (
    <div style={{ marginTop: 14 }}>
      <h2>Recent errors</h2>
      {q.error ? <p className="small muted">{q.error.message}</p> : null}
      {q.data && !jobs.length ? <p className="small muted">No failed jobs.</p> : null}
      {jobs.map((j) => (
        <div key={`${j.queue}:${j.id}`} className="small" style={{ padding: '4px 0', borderTop: '1px solid var(--border)', overflowWrap: 'anywhere' }}>
          <span style={{ color: 'var(--danger)' }}>{failureText(j.failedReason)}</span>{' '}
          <span className="muted">
            · <Link to="/queues">{j.queue}</Link> · {fmtAgo(j.finishedAt)}
          </span>
        </div>
      ))}
    </div>
  );
}
