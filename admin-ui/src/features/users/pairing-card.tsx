import { ApprovePairingDocument, DenyPairingDocument, PairingRequestsDocument } from '../../gql/graphql';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo, fmtDate } from '../../lib/format';
import { Card, Empty, ErrorBox, QueryView, TableHead } from '../../components/ui';

/** Pending pairing requests of unknown senders: approve (they become MEMBER) or deny. */
export function PairingCard({ onChanged }: { onChanged(): void }) {
  const q = useQuery(PairingRequestsDocument, { status: 'PENDING' }, { pollMs: 3000 });
  const approve = useMutation(ApprovePairingDocument);
  const deny = useMutation(DenyPairingDocument);
  const busy = approve.busy || deny.busy;
  return (
    <Card title="Pairing requests">
      <ErrorBox error={approve.error ?? deny.error} />
      <QueryView q={q} empty={(d) => (d.pairingRequests.length ? null : <Empty title="No pending requests">Unknown senders get a code; it shows up here.</Empty>)}>
        {(d) => (
          <div className="table-wrap">
            <table aria-label="Pending pairing requests">
              <TableHead columns={['Code', 'Sender', 'Asked', 'Expires', '']} />
              <tbody>
                {d.pairingRequests.map((p) => (
                  <tr key={p.id}>
                    <td className="mono">{p.code}</td>
                    <td>
                      {p.displayName ?? p.handle}
                      <div className="small muted">
                        {p.channel}:{p.handle}
                      </div>
                    </td>
                    <td>{fmtAgo(p.createdAt)}</td>
                    <td>{fmtDate(p.expiresAt)}</td>
                    <td>
                      <div className="row">
                        <button className="primary small" disabled={busy} aria-label={`Approve ${p.code}`} onClick={async () => (await approve.run({ code: p.code })) && (await q.refetch(), onChanged())}>
                          Approve
                        </button>
                        <button className="danger small" disabled={busy} aria-label={`Deny ${p.code}`} onClick={async () => (await deny.run({ code: p.code })) && (await q.refetch())}>
                          Deny
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </QueryView>
    </Card>
  );
}
