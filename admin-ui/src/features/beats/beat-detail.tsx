import { useEffect, useState } from 'react';
import { BeatDocument, BeatRunsDocument, BeatRunsLiveDocument, RunBeatDocument, type BeatRunFieldsFragment } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { Link } from '../../lib/router';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtDate } from '../../lib/format';
import { fmtDuration, fmtInZone } from '../../lib/time-zone';
import { Badge, Card, Empty, ErrorBox, PageHeader, QueryView } from '../../components/ui';
import { BeatForm } from './beat-form';

const TONE: Record<string, string> = { OK: 'ok', FAILED: 'danger', RUNNING: 'accent' };

/** One beat: what it does and when, edit, run now with live progress, and its run history. */
export function BeatDetail({ id }: { id: string }) {
  const { me, client } = useAuth();
  const q = useQuery(BeatDocument, { id });
  const [after, setAfter] = useState<string[]>([]);
  const runs = useQuery(BeatRunsDocument, { beatId: id, after: after.at(-1) ?? null });
  const run = useMutation(RunBeatDocument);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  /** Runs that arrived live (started or finished since the page opened), by id. */
  const [live, setLive] = useState<Map<string, BeatRunFieldsFragment>>(new Map());

  useEffect(() => {
    if (!client) return;
    return client.subscribe(BeatRunsLiveDocument, { beatId: id }, {
      next: (d) => {
        setLive((m) => new Map(m).set(d.beatRuns.id, d.beatRuns));
        if (d.beatRuns.status !== 'RUNNING') void q.refetch();
      },
    });
    // Only the beat changes what to follow; refetch is called through the latest closure each event.
  }, [client, id]);

  const beat = q.data?.beat;
  const mayWrite = trustAtLeast(me?.trust, 'TRUSTED') && !!beat && !beat.managed;
  const fetched = runs.data?.beatRuns.edges.map((e) => e.node) ?? [];
  const onFirstPage = after.length === 0;
  const newOnes = onFirstPage ? [...live.values()].filter((r) => !fetched.some((f) => f.id === r.id)).sort((a, b) => b.createdAt.localeCompare(a.createdAt)) : [];
  const shown = [...newOnes, ...fetched.map((r) => live.get(r.id) ?? r)];
  const running = shown.some((r) => r.status === 'RUNNING') || run.busy;

  return (
    <QueryView q={q}>
      {({ beat: b }) => (
        <>
          <PageHeader
            title={b.name}
            subtitle={
              <>
                <Link to="/beats">Beats</Link> · {b.kind === 'TASK' ? 'task' : 'reminder'} · {b.schedule}
              </>
            }
            actions={
              <>
                {trustAtLeast(me?.trust, 'TRUSTED') ? (
                  <button className="primary" disabled={running} onClick={() => void run.run({ id: b.id }).then(() => runs.refetch())}>
                    {running ? 'Running…' : 'Run now'}
                  </button>
                ) : null}
                {mayWrite && !editing ? <button onClick={() => (setEditing(true), setSaved(null))}>Edit</button> : null}
              </>
            }
          />
          <div className="stack">
            {b.managed ? (
              <div className="alert info" role="note">
                This beat is managed: it comes from <code>heartbeats.default.json</code> and is synced at every start. Change it in that file; here it is read-only.
              </div>
            ) : null}
            {saved ? (
              <div className="alert info" role="status">
                {saved}
              </div>
            ) : null}
            <ErrorBox error={run.error} />
            {editing ? (
              <Card title="Edit beat">
                <BeatForm beat={b} onCancel={() => setEditing(false)} onDone={() => (setEditing(false), setSaved('Beat saved.'), void q.refetch())} />
              </Card>
            ) : (
              <Card title="Beat">
                <dl className="facts">
                  <dt>Owner</dt>
                  <dd>{b.owner?.displayName ?? (b.managed ? 'server (managed)' : '–')}</dd>
                  <dt>{b.kind === 'TASK' ? 'Instruction' : 'Reminder text'}</dt>
                  <dd style={{ whiteSpace: 'pre-wrap' }}>{b.text}</dd>
                  <dt>Schedule</dt>
                  <dd>
                    {b.schedule} {b.cron ? <code>{b.cron}</code> : null} <span className="muted">({b.timezone})</span>
                  </dd>
                  <dt>Next runs</dt>
                  <dd>
                    {b.nextRuns.length ? (
                      <ol className="runs-preview">
                        {b.nextRuns.map((r) => (
                          <li key={r}>{fmtInZone(r, b.timezone)}</li>
                        ))}
                      </ol>
                    ) : (
                      <span className="muted">{b.enabled ? 'none ahead' : 'disabled'}</span>
                    )}
                  </dd>
                  <dt>Delivers to</dt>
                  <dd>
                    {!b.targetChannel
                      ? "the owner's principal chat"
                      : (b.targetChannel === 'web' || b.targetChannel === 'tui') && b.targetChatId === b.userId
                        ? `the owner's ${b.targetChannel} chat`
                        : `${b.targetChannel}: ${b.targetChatId}`}
                  </dd>
                  <dt>State</dt>
                  <dd>
                    <Badge value={b.enabled ? 'enabled' : 'disabled'} tone={b.enabled ? 'ok' : ''} /> {b.consecutiveFailures ? <span className="small muted">{b.consecutiveFailures} failed run(s) in a row</span> : null}
                  </dd>
                </dl>
              </Card>
            )}
            <Card title="Runs">
              <QueryView q={runs} empty={() => (shown.length ? null : <Empty title="No runs yet">Press “Run now” to try it, or wait for its schedule.</Empty>)}>
                {(d) => (
                  <>
                    <div className="table-wrap">
                      <table aria-label="Runs" className="cards">
                        <thead>
                          <tr>
                            <th>Started</th>
                            <th>Status</th>
                            <th className="num">Duration</th>
                            <th>Output or error</th>
                            <th>Session</th>
                          </tr>
                        </thead>
                        <tbody>
                          {shown.map((r) => (
                            <tr key={r.id} data-run={r.id}>
                              <td>
                                {fmtDate(r.createdAt)}
                                <div className="small muted">{r.trigger === 'MANUAL' ? 'run now' : 'scheduled'}</div>
                              </td>
                              <td data-label="Status">
                                {r.status === 'RUNNING' ? <span className="spinner" aria-hidden="true" /> : null} <Badge value={r.status} tone={TONE[r.status]} />
                              </td>
                              <td className="num" data-label="Duration">{fmtDuration(r.durationMs)}</td>
                              <td data-label="Output or error">
                                {r.error ? <div className="text-danger">{r.error}</div> : null}
                                {r.output ? <div className="run-output">{r.output}</div> : r.status === 'RUNNING' ? <span className="muted">running…</span> : null}
                              </td>
                              <td data-label="Session">{r.sessionId ? <Link to={`/sessions/${r.sessionId}`}>cron:{b.id.slice(0, 8)}…</Link> : <span className="muted small">–</span>}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                    <nav className="row spread pager" aria-label="Runs pages">
                      <span className="small muted">{d.beatRuns.totalCount} runs</span>
                      <span className="row">
                        <button className="small" disabled={!after.length} onClick={() => setAfter((a) => a.slice(0, -1))}>
                          Newer
                        </button>
                        <button className="small" disabled={!d.beatRuns.pageInfo.hasNextPage} onClick={() => setAfter((a) => [...a, d.beatRuns.pageInfo.endCursor!])}>
                          Older
                        </button>
                      </span>
                    </nav>
                  </>
                )}
              </QueryView>
            </Card>
          </div>
        </>
      )}
    </QueryView>
  );
}
