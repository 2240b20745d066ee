import { useState } from 'react';
import { DecideToolApprovalDocument, ToolApprovalsDocument, type ToolApprovalDecision, type ToolApprovalStatus } from '../../gql/graphql';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo, fmtDate } from '../../lib/format';
import { Badge, Card, Empty, ErrorBox, PageHeader, QueryView, TableHead } from '../../components/ui';
import { DecisionButtons } from './decision-buttons';

const STATUSES: Array<ToolApprovalStatus | ''> = ['PENDING', 'ALLOWED_ONCE', 'ALLOWED_ALWAYS', 'DENIED', 'EXPIRED', ''];

export function ApprovalsPage() {
  const [status, setStatus] = useState<ToolApprovalStatus | ''>('PENDING');
  const q = useQuery(ToolApprovalsDocument, { status: status || null }, { pollMs: 2000 });
  const decide = useMutation(DecideToolApprovalDocument);
  const go = async (id: string, decision: ToolApprovalDecision) => {
    if (await decide.run({ id, decision })) await q.refetch();
  };
  return (
    <>
      <PageHeader
        title="Approvals"
        subtitle="Tool calls that wait for a decision (live). Undecided requests are denied when they expire."
        actions={
          <label className="field">
            Status
            <select value={status} onChange={(e) => setStatus(e.target.value as ToolApprovalStatus | '')}>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s || 'All'}
                </option>
              ))}
            </select>
          </label>
        }
      />
      <ErrorBox error={decide.error} />
      <Card>
        <QueryView q={q} empty={(d) => (d.toolApprovals.length ? null : <Empty title={status === 'PENDING' ? 'Nothing waits for approval' : 'No approvals'} />)}>
          {(d) => (
            <div className="table-wrap">
              <table>
                <TableHead columns={['Tool', 'Arguments', 'Status', 'Asked', 'Expires / decided', '']} />
                <tbody>
                  {d.toolApprovals.map((a) => (
                    <tr key={a.id} data-approval={a.id}>
                      <td>
                        <strong>{a.tool}</strong>
                        <div className="small muted mono">…{a.id.slice(-8)}</div>
                      </td>
                      <td>
                        <pre>{typeof a.args === 'string' ? a.args : JSON.stringify(a.args)}</pre>
                      </td>
                      <td>
                        <Badge value={a.status} />
                      </td>
                      <td title={fmtDate(a.createdAt)}>{fmtAgo(a.createdAt)}</td>
                      <td>{a.status === 'PENDING' ? fmtDate(a.expiresAt) : fmtDate(a.decidedAt)}</td>
                      <td>
                        {a.status === 'PENDING' ? (
                          <DecisionButtons busy={decide.busy} onDecide={(d) => void go(a.id, d)} />
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </QueryView>
      </Card>
    </>
  );
}
