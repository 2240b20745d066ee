import { useState, type FormEvent } from 'react';
import { CreateApiTokenDocument, RevokeApiTokenDocument, UserTokensDocument } from '../../gql/graphql';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, QueryView } from '../../components/ui';

/** API tokens of one user: create (the secret is shown once) and revoke. */
export function TokensCard({ userId }: { userId: string }) {
  const q = useQuery(UserTokensDocument, { id: userId });
  const create = useMutation(CreateApiTokenDocument);
  const revoke = useMutation(RevokeApiTokenDocument);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await create.run({ userId, name: name.trim() || 'admin console' });
    if (r) {
      setSecret(r.createApiToken.token);
      setName('');
      await q.refetch();
    }
  };
  return (
    <Card title={`API tokens${q.data ? ` of ${q.data.user.displayName}` : ''}`}>
      <div className="stack">
        <form className="row" onSubmit={submit}>
          <input aria-label="Token name" placeholder="Token name, e.g. laptop" value={name} onChange={(e) => setName(e.target.value)} />
          <button type="submit" disabled={create.busy}>
            Create token
          </button>
        </form>
        {secret ? (
          <div className="alert info" role="status">
            <div>Copy this token now: it is shown only once.</div>
            <div className="secret mono" data-testid="new-token">
              {secret}
            </div>
            <div className="row" style={{ marginTop: 6 }}>
              <button className="small" onClick={() => void navigator.clipboard?.writeText(secret)}>
                Copy
              </button>
              <button className="small" onClick={() => setSecret(null)}>
                Done
              </button>
            </div>
          </div>
        ) : null}
        <ErrorBox error={create.error ?? revoke.error} />
        <QueryView q={q} empty={(d) => (d.user.apiTokens.length ? null : <Empty title="No tokens" />)}>
          {(d) => (
            <table>
              <tbody>
                {d.user.apiTokens.map((t) => (
                  <tr key={t.id}>
                    <td>
                      {t.name}
                      <div className="small muted mono">{t.prefix}…</div>
                    </td>
                    <td>{t.revokedAt ? <Badge value="revoked" tone="danger" /> : <span className="small muted">used {fmtAgo(t.lastUsedAt)}</span>}</td>
                    <td className="num">
                      {!t.revokedAt ? (
                        <ConfirmButton danger label="Revoke" title={`Revoke “${t.name}”?`} body="Clients using this token are signed out at once." confirmLabel="Revoke" onConfirm={async () => void ((await revoke.run({ id: t.id })) && (await q.refetch()))} />
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </QueryView>
      </div>
    </Card>
  );
}
