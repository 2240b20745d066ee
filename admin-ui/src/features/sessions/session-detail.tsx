import { useEffect, useState } from 'react';
import { ArchiveSessionDocument, CompactSessionDocument, DeleteSessionDocument, ExportSessionDocument, NewSessionDocument, SessionDetailDocument, SessionLiveDocument } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { Link, useRouter } from '../../lib/router';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { download, fmtDate, fmtNum } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView } from '../../components/ui';

export function SessionDetail({ id }: { id: string }) {
  const { client } = useAuth();
  const { navigate, query } = useRouter();
  const compactedFrom = query.get('compacted');
  const q = useQuery(SessionDetailDocument, { id });
  const [instructions, setInstructions] = useState('');
  const newSession = useMutation(NewSessionDocument);
  const compact = useMutation(CompactSessionDocument);
  const archive = useMutation(ArchiveSessionDocument);
  const exportS = useMutation(ExportSessionDocument);
  const del = useMutation(DeleteSessionDocument);
  const { refetch } = q;
  // Live transcript: refresh when the session changes.
  useEffect(() => {
    if (!client) return;
    return client.subscribe(SessionLiveDocument, { sessionId: id }, { next: () => void refetch() });
  }, [client, id, refetch]);
  const error = newSession.error ?? compact.error ?? archive.error ?? exportS.error ?? del.error;
  return (
    <QueryView q={q}>
      {({ session: s, messages }) => (
        <>
          <PageHeader
            title={s.title ?? s.key}
            subtitle={
              <>
                <Link to="/sessions">← Sessions</Link> · <span className="mono">{s.key}</span> · {s.channel} · {s.user?.displayName ?? 'no user'} · started {fmtDate(s.startedAt)}
              </>
            }
            actions={
              <>
                <Badge value={s.status} />
                <button
                  onClick={async () => {
                    const r = await exportS.run({ id });
                    if (r) download(`${s.key.replace(/[^a-z0-9]+/gi, '-')}.jsonl`, r.exportSession);
                  }}
                >
                  Export JSONL
                </button>
                {s.status === 'ACTIVE' ? (
                  <>
                    <ConfirmButton
                      label="New session"
                      className=""
                      title="Start a new session?"
                      body="The current session is archived (still readable) and the next message starts an empty one."
                      confirmLabel="Start new"
                      onConfirm={async () => {
                        const r = await newSession.run({ sessionId: id });
                        if (r) navigate(`/sessions/${r.newSession.id}`);
                      }}
                    />
                    <ConfirmButton
                      label="Archive"
                      className=""
                      title="Archive this session?"
                      body="It stays readable and exportable."
                      confirmLabel="Archive"
                      onConfirm={async () => {
                        if (await archive.run({ id })) await q.refetch();
                      }}
                    />
                  </>
                ) : null}
                <ConfirmButton
                  danger
                  label="Delete"
                  title="Delete this session?"
                  body="Its messages are deleted for good; memories written from it stay."
                  confirmLabel="Delete"
                  onConfirm={async () => {
                    if (await del.run({ id })) navigate('/sessions');
                  }}
                />
              </>
            }
          />
          <div className="stack">
            <ErrorBox error={error} />
            {compactedFrom && compactedFrom !== id ? (
              <div className="alert ok" role="status">
                Compacted: the conversation goes on in this session, which starts from a summary of the earlier one (
                <Link to={`/sessions/${compactedFrom}`}>the earlier session</Link> is archived).
              </div>
            ) : null}
            <div className="grid cols-4">
              {[
                ['Messages', s.messageCount],
                ['Input tokens', s.inputTokens],
                ['Output tokens', s.outputTokens],
                ['Cache read / write', `${fmtNum(s.cacheReadTokens)} / ${fmtNum(s.cacheWriteTokens)}`],
              ].map(([label, value]) => (
                <Card key={String(label)}>
                  <div className="muted small">{label}</div>
                  <div className="stat">{typeof value === 'number' ? fmtNum(value) : value}</div>
                </Card>
              ))}
            </div>
            {s.status === 'ACTIVE' ? (
              <Card title="Compact">
                <form
                  className="row"
                  onSubmit={async (e) => {
                    e.preventDefault();
                    const r = await compact.run({ sessionId: id, instructions: instructions.trim() || null });
                    if (r) navigate(`/sessions/${r.compactSession.id}?compacted=${encodeURIComponent(id)}`);
                  }}
                >
                  <input style={{ flex: 1 }} aria-label="Compaction instructions" placeholder="Optional: what the summary should focus on" value={instructions} onChange={(e) => setInstructions(e.target.value)} />
                  <button type="submit" disabled={compact.busy}>
                    {compact.busy ? 'Compacting…' : 'Compact now'}
                  </button>
                </form>
              </Card>
            ) : null}
            <Card title={`Transcript (${messages.totalCount})`}>
              {messages.edges.length ? (
                <div className="table-wrap">
                  <table>
                    <tbody>
                      {messages.edges.map(({ node: m }) => (
                        <tr key={m.id}>
                          <td style={{ width: 110 }}>
                            <Badge value={m.role} tone={m.role === 'USER' ? 'accent' : m.role === 'TOOL' ? 'warn' : ''} />
                            <div className="small muted">{fmtDate(m.createdAt)}</div>
                          </td>
                          <td>
                            <pre>{m.content || (m.toolCalls ? `tool calls: ${JSON.stringify(m.toolCalls)}` : '')}</pre>
                          </td>
                          <td className="num small muted">{m.inputTokens || m.outputTokens ? `${m.inputTokens}/${m.outputTokens}` : ''}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              ) : (
                <Empty title="No messages in this session" />
              )}
            </Card>
          </div>
        </>
      )}
    </QueryView>
  );
}
