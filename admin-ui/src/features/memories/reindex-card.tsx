import { useEffect, useRef, useState } from 'react';
import { MemoryJobProgressDocument, ReindexMemoriesDocument, type MemoryJobProgressSubscription } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { useMutation } from '../../lib/use-graphql';
import { Card, ErrorBox } from '../../components/ui';

type Update = MemoryJobProgressSubscription['jobProgress'];

/** Re-index the memory search index (everyone's or one user's) with a live progress bar (ADMIN). */
export function ReindexCard({ users }: { users: Array<{ id: string; displayName: string }> }) {
  const { client } = useAuth();
  const start = useMutation(ReindexMemoriesDocument);
  const [userId, setUserId] = useState('');
  const [update, setUpdate] = useState<Update | null>(null);
  const [liveError, setLiveError] = useState<Error | null>(null);
  const stop = useRef<(() => void) | null>(null);
  useEffect(() => () => stop.current?.(), []);
  const running = !!update && update.state !== 'COMPLETED' && update.state !== 'FAILED';
  const run = async () => {
    stop.current?.();
    setUpdate(null);
    setLiveError(null);
    const r = await start.run({ userId: userId || null });
    if (!r || !client) return;
    const jobId = r.reindexMemories.jobId;
    setUpdate({ jobId, state: 'WAITING', percent: 0, progress: null, result: null, error: null });
    stop.current = client.subscribe(MemoryJobProgressDocument, { jobId }, { next: (d) => setUpdate(d.jobProgress), error: setLiveError });
  };
  const percent = Math.round(update?.percent ?? 0);
  const progress = update?.progress as { done?: number; total?: number } | null;
  const result = update?.result as { indexed?: number; embedded?: number } | null;
  return (
    <Card title="Search index">
      <p className="small muted" style={{ marginTop: 0 }}>
        Rebuilds the keyword and vector index of the memories, e.g. after changing the embedding model. Memories stay usable meanwhile.
      </p>
      <div className="row">
        <select aria-label="Re-index whose memories" value={userId} onChange={(e) => setUserId(e.target.value)} disabled={running}>
          <option value="">Everyone's memories</option>
          {users.map((u) => (
            <option key={u.id} value={u.id}>
              {u.displayName}'s memories
            </option>
          ))}
        </select>
        <button onClick={run} disabled={start.busy || running}>
          {running ? 'Re-indexing…' : 'Re-index'}
        </button>
      </div>
      <ErrorBox error={start.error ?? liveError} />
      {update ? (
        <div style={{ marginTop: 10 }}>
          <div className="progress" role="progressbar" aria-label="Re-index progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent}>
            <div style={{ width: `${percent}%` }} />
          </div>
          <p className="small" role="status" style={{ margin: '6px 0 0' }}>
            {update.state === 'COMPLETED'
              ? `Done: 100 % — ${result?.indexed ?? 0} memories re-indexed${result?.embedded ? `, ${result.embedded} embedded` : ''}.`
              : update.state === 'FAILED'
                ? `Failed: ${update.error ?? 'unknown error'}`
                : `${percent} %${progress?.total !== undefined ? ` — ${progress.done ?? 0} of ${progress.total}` : ''} (${update.state.toLowerCase()})`}
          </p>
        </div>
      ) : null}
    </Card>
  );
}
