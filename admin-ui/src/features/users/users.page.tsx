import { useState, type FormEvent } from 'react';
import { CreateUserDocument, DeleteUserDocument, SetUserTrustDocument, UsersDocument, type TrustLevel } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { maxGrantable, TRUST_ORDER, trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView, TableHead } from '../../components/ui';
import { PairingCard } from './pairing-card';
import { TokensCard } from './tokens-card';
import { LinkIdentityButton, RenameUserButton } from './user-actions';

export function UsersPage() {
  const { me } = useAuth();
  const q = useQuery(UsersDocument, {});
  const setTrust = useMutation(SetUserTrustDocument);
  const createUser = useMutation(CreateUserDocument);
  const deleteUser = useMutation(DeleteUserDocument);
  const [selected, setSelected] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [newTrust, setNewTrust] = useState<TrustLevel | ''>('');
  const max = me ? maxGrantable(me.trust) : null;
  const grantable = TRUST_ORDER.filter((t) => max && trustAtLeast(max, t));
  const mayChange = (current: TrustLevel) => !!max && trustAtLeast(max, current);
  const owner = me?.trust === 'OWNER';
  const add = async (e: FormEvent) => {
    e.preventDefault();
    if (name.trim() && (await createUser.run({ input: { displayName: name.trim(), trust: newTrust || null } }))) {
      setName('');
      setNewTrust('');
      await q.refetch();
    }
  };
  return (
    <>
      <PageHeader title="Users & trust" subtitle={`You may grant up to ${max ?? '–'}${owner ? '' : '; only an OWNER grants ADMIN and OWNER'}.`} />
      <div className="stack">
        <PairingCard onChanged={() => void q.refetch()} />
        <Card
          title="Users"
          actions={
            <form className="row" onSubmit={add}>
              <input aria-label="New user's name" placeholder="Name" value={name} onChange={(e) => setName(e.target.value)} />
              <select aria-label="New user's trust" value={newTrust} onChange={(e) => setNewTrust(e.target.value as TrustLevel | '')}>
                <option value="">Default trust</option>
                {grantable.map((t) => (
                  <option key={t}>{t}</option>
                ))}
              </select>
              <button type="submit" disabled={createUser.busy}>
                Add user
              </button>
            </form>
          }
        >
          <ErrorBox error={setTrust.error ?? createUser.error ?? deleteUser.error} />
          <QueryView q={q} empty={(d) => (d.users.edges.length ? null : <Empty title="No users">Add one with “Add user”, or approve a pairing request.</Empty>)}>
            {(d) => (
              <div className="table-wrap">
                <table aria-label="Users">
                  <TableHead columns={['User', 'Identities', 'Trust', '']} />
                  <tbody>
                    {d.users.edges.map(({ node: u }) => (
                      <tr key={u.id} className={selected === u.id ? 'selected' : ''} data-user={u.displayName}>
                        <td>
                          <strong>{u.displayName}</strong>
                          {u.id === me?.id ? <span className="small muted"> (you)</span> : null}
                          <div className="small muted mono">…{u.id.slice(-8)}</div>
                        </td>
                        <td>
                          {u.identities.length ? u.identities.map((i) => <div key={i.id} className="small mono">{i.key}</div>) : <span className="muted small">none</span>}
                        </td>
                        <td>
                          {mayChange(u.trust) && u.id !== me?.id ? (
                            <select
                              aria-label={`Trust of ${u.displayName}`}
                              value={u.trust}
                              disabled={setTrust.busy}
                              onChange={async (e) => {
                                if (await setTrust.run({ userId: u.id, trust: e.target.value as TrustLevel })) await q.refetch();
                              }}
                            >
                              {grantable.map((t) => (
                                <option key={t}>{t}</option>
                              ))}
                            </select>
                          ) : (
                            <Badge value={u.trust} />
                          )}
                        </td>
                        <td>
                          <div className="row">
                            <button className="small" aria-pressed={selected === u.id} onClick={() => setSelected(selected === u.id ? null : u.id)}>
                              Tokens
                            </button>
                            {u.id === me?.id || (mayChange(u.trust) && u.id !== me?.id) ? <RenameUserButton user={u} onDone={() => void q.refetch()} /> : null}
                            {mayChange(u.trust) || owner ? <LinkIdentityButton user={u} onDone={() => void q.refetch()} /> : null}
                            {owner && u.id !== me?.id ? (
                              <ConfirmButton
                                danger
                                label="Delete"
                                title={`Delete ${u.displayName}?`}
                                body={<>This deletes the user with their identities, tokens, sessions, messages, memories and beats. It cannot be undone.</>}
                                confirmLabel="Delete user and data"
                                onConfirm={async () => {
                                  if (await deleteUser.run({ id: u.id })) {
                                    if (selected === u.id) setSelected(null);
                                    await q.refetch();
                                  }
                                }}
                              />
                            ) : null}
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
        {selected ? <TokensCard key={selected} userId={selected} /> : null}
      </div>
    </>
  );
}
