import { useState } from 'react';
import { SessionsDocument, UserChoicesDocument, type SessionStatus } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { Link } from '../../lib/router';
import { trustAtLeast } from '../../lib/trust';
import { useQuery } from '../../lib/use-graphql';
import { fmtAgo, fmtNum } from '../../lib/format';
import { Badge, Card, Empty, PageHeader, QueryView } from '../../components/ui';
import { SessionDetail } from './session-detail';

export function SessionsPage({ params }: { params: string[] }) {
  if (params[0]) return <SessionDetail id={params[0]} />;
  return <SessionList />;
}

function SessionList() {
  const { me } = useAuth();
  const admin = trustAtLeast(me?.trust, 'ADMIN');
  const [userId, setUserId] = useState('');
  const [channel, setChannel] = useState('');
  const [status, setStatus] = useState<SessionStatus | ''>('');
  const users = useQuery(UserChoicesDocument, {}, { skip: !admin });
  const q = useQuery(SessionsDocument, { filter: { userId: userId || null, channel: channel || null, status: status || null } }, { pollMs: 10_000 });
  return (
    <>
      <PageHeader title="Sessions" subtitle={admin ? 'Every conversation on this server.' : 'Your conversations.'} />
      <Card>
        <div className="row" style={{ marginBottom: 12 }}>
          {admin ? (
            <label className="field">
              User
              <select value={userId} onChange={(e) => setUserId(e.target.value)}>
                <option value="">Everyone</option>
                {users.data?.users.edges.map(({ node }) => (
                  <option key={node.id} value={node.id}>
                    {node.displayName}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <label className="field">
            Channel
            <select value={channel} onChange={(e) => setChannel(e.target.value)}>
              <option value="">All</option>
              {['web', 'tui', 'telegram', 'whatsapp', 'cron', 'hook'].map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>
          <label className="field">
            Status
            <select value={status} onChange={(e) => setStatus(e.target.value as SessionStatus | '')}>
              <option value="">All</option>
              <option>ACTIVE</option>
              <option>ARCHIVED</option>
            </select>
          </label>
        </div>
        <QueryView q={q} empty={(d) => (d.sessions.edges.length ? null : <Empty title="No sessions">Sessions start when someone writes to the assistant.</Empty>)}>
          {(d) => (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>Session</th>
                    {admin ? <th>User</th> : null}
                    <th>Status</th>
                    <th className="num">Messages</th>
                    <th className="num">Tokens in / out</th>
                    <th>Last activity</th>
                  </tr>
                </thead>
                <tbody>
                  {d.sessions.edges.map(({ node: s }) => (
                    <tr key={s.id}>
                      <td>
                        <Link to={`/sessions/${s.id}`}>{s.title ?? 'No messages yet'}</Link>
                        <div className="small muted">
                          <span className="mono">{s.key}</span> · {s.chatKind}
                        </div>
                      </td>
                      {admin ? <td>{s.user?.displayName ?? '–'}</td> : null}
                      <td>
                        <Badge value={s.status} />
                      </td>
                      <td className="num">{s.messageCount}</td>
                      <td className="num">
                        {fmtNum(s.inputTokens)} / {fmtNum(s.outputTokens)}
                      </td>
                      <td>{fmtAgo(s.lastActivityAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <p className="small muted">
                {d.sessions.totalCount} session{d.sessions.totalCount === 1 ? '' : 's'}
                {d.sessions.pageInfo.hasNextPage ? ' (showing the first 50)' : ''}
              </p>
            </div>
          )}
        </QueryView>
      </Card>
    </>
  );
}
