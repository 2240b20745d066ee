import { useState, type FormEvent } from 'react';
import { AuditLogDocument, UserChoicesDocument } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { fmtDate } from '../../lib/format';
import { Badge, Card, Empty, PageHeader, QueryView, TableHead } from '../../components/ui';
import { AuditDetails } from './audit-details';

export function AuditPage() {
  const [actionText, setActionText] = useState('');
  const [action, setAction] = useState('');
  const [actor, setActor] = useState('');
  const [after, setAfter] = useState<string | null>(null);
  const users = useQuery(UserChoicesDocument, {});
  const q = useQuery(AuditLogDocument, { filter: { action: action || null, actorUserId: actor || null }, after });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setAfter(null);
    setAction(actionText.trim());
  };
  const nameOf = (id: string | null | undefined) => users.data?.users.edges.find((e) => e.node.id === id)?.node.displayName;
  return (
    <>
      <PageHeader title="Audit log" subtitle="Trust changes, pairing decisions, approvals, tokens and refused tool calls, newest first." />
      <Card>
        <form className="row" style={{ marginBottom: 12 }} onSubmit={apply}>
          <label className="field">
            Action
            <input placeholder="e.g. user.trust.set" value={actionText} onChange={(e) => setActionText(e.target.value)} />
          </label>
          <label className="field">
            Actor
            <select value={actor} onChange={(e) => (setAfter(null), setActor(e.target.value))}>
              <option value="">Anyone</option>
              {users.data?.users.edges.map(({ node }) => (
                <option key={node.id} value={node.id}>
                  {node.displayName}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" style={{ alignSelf: 'flex-end' }}>
            Filter
          </button>
        </form>
        <QueryView q={q} empty={(d) => (d.auditLog.edges.length ? null : <Empty title="No entries">Changes of trust, pairing decisions, approvals and tokens are recorded here as they happen.</Empty>)}>
          {(d) => (
            <div className="table-wrap">
              <table aria-label="Audit log">
                <TableHead columns={['When', 'Action', 'Actor', 'Target', 'Details']} />
                <tbody>
                  {d.auditLog.edges.map(({ node: a }) => (
                    <tr key={a.id}>
                      <td className="small" style={{ whiteSpace: "nowrap" }}>{fmtDate(a.createdAt)}</td>
                      <td>
                        <Badge value={a.action} tone={/refus|deny|denied|delete|revoke/.test(a.action) ? 'danger' : 'accent'} />
                      </td>
                      <td>{nameOf(a.actorUserId) ?? a.actor}</td>
                      <td className="small">{a.targetType ? `${a.targetType} ${a.targetId ? `…${a.targetId.slice(-8)}` : ''}` : '–'}</td>
                      <td>
                        <AuditDetails details={a.details} nameOf={nameOf} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <div className="row spread" style={{ marginTop: 8 }}>
                <span className="small muted">{d.auditLog.totalCount} entries</span>
                <div className="row">
                  {after ? <button onClick={() => setAfter(null)}>Newest</button> : null}
                  {d.auditLog.pageInfo.hasNextPage ? <button onClick={() => setAfter(d.auditLog.pageInfo.endCursor ?? null)}>Older</button> : null}
                </div>
              </div>
            </div>
          )}
        </QueryView>
      </Card>
    </>
  );
}
