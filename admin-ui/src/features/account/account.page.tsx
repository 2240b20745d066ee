import { useState, type FormEvent } from 'react';
import { CreateApiTokenDocument, MyAccountDocument, RevokeApiTokenDocument } from '../../gql/graphql';
import { Link } from '../../lib/router';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView } from '../../components/ui';
import { CopyButton, Pager, usePaged } from '../../components/pager';
import { apiExamples } from './api-examples';
import { LinkChannelCard } from './link-channel-card';

function Example({ title, code }: { title: string; code: string }) {
  return (
    <div className="stack" style={{ gap: 4 }}>
      <div className="row spread">
        <strong className="small">{title}</strong>
        <CopyButton text={code} />
      </div>
      <pre className="secret mono" aria-label={title}>
        {code}
      </pre>
    </div>
  );
}

/** The signed-in user's own things: API tokens with examples, linked channels, and a way to their beats. */
export function AccountPage() {
  const q = useQuery(MyAccountDocument, {});
  const create = useMutation(CreateApiTokenDocument);
  const revoke = useMutation(RevokeApiTokenDocument);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [linked, setLinked] = useState<string | null>(null);
  const tokens = q.data?.me.apiTokens ?? [];
  const { items, pager } = usePaged([...tokens].sort((a, b) => Number(!!a.revokedAt) - Number(!!b.revokedAt) || b.createdAt.localeCompare(a.createdAt)), 10);
  const refetch = q.refetch;
  const origin = location.origin;
  const ex = apiExamples(origin, secret);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!q.data) return;
    const r = await create.run({ userId: q.data.me.id, name: name.trim() || 'my client' });
    if (r) {
      setSecret(r.createApiToken.token);
      setName('');
      await q.refetch();
    }
  };
  return (
    <>
      <PageHeader title="Account" subtitle="Your API tokens, the channels linked to you, and your beats." />
      <QueryView q={q}>
        {({ me }) => (
          <div className="stack">
            {linked ? (
              <div className="alert info" role="status">
                Linked <strong>{linked}</strong> to you.
              </div>
            ) : null}
            <div className="grid cols-2">
              <Card title="You">
                <p style={{ margin: 0 }}>
                  <strong>{me.displayName}</strong> <Badge value={me.trust} />
                </p>
                <p className="small muted">
                  Your beats (scheduled reminders and tasks) are on the <Link to="/beats">Beats</Link> page.
                </p>
              </Card>
              <LinkChannelCard me={me} refetch={refetch} onLinked={setLinked} />
            </div>
            <Card title="API tokens">
              <div className="stack">
                <p className="small muted" style={{ margin: 0 }}>
                  A token signs a client in as you: the OpenAI-compatible API at <code>{origin}/v1</code>, GraphQL at <code>{origin}/graphql</code>, <code>muninn chat</code>.
                </p>
                <form className="row" onSubmit={submit}>
                  <input aria-label="Token name" placeholder="Token name, e.g. laptop" value={name} onChange={(e) => setName(e.target.value)} />
                  <button type="submit" disabled={create.busy}>
                    Create token
                  </button>
                </form>
                {secret ? (
                  <div className="alert info" role="status">
                    <div>Copy this token now: it is shown only once.</div>
                    <div className="secret mono" data-testid="my-new-token">
                      {secret}
                    </div>
                    <div className="row" style={{ marginTop: 6 }}>
                      <CopyButton text={secret} />
                      <button className="small" onClick={() => setSecret(null)}>
                        Done
                      </button>
                    </div>
                  </div>
                ) : null}
                <ErrorBox error={create.error ?? revoke.error} />
                {tokens.length ? (
                  <div className="table-wrap">
                    <table aria-label="Your tokens">
                      <thead>
                        <tr>
                          <th>Name</th>
                          <th>Used</th>
                          <th />
                        </tr>
                      </thead>
                      <tbody>
                        {items.map((t) => (
                          <tr key={t.id}>
                            <td>
                              {t.name}
                              <div className="small muted mono">{t.prefix}…</div>
                            </td>
                            <td>{t.revokedAt ? <Badge value="revoked" tone="danger" /> : <span className="small muted">{t.lastUsedAt ? fmtAgo(t.lastUsedAt) : 'never'}</span>}</td>
                            <td className="num">
                              {!t.revokedAt ? (
                                <ConfirmButton danger label="Revoke" title={`Revoke “${t.name}”?`} body="Clients using this token are signed out at once." confirmLabel="Revoke" onConfirm={async () => void ((await revoke.run({ id: t.id })) && (await q.refetch()))} />
                              ) : null}
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                    <Pager {...pager} label="Tokens" />
                  </div>
                ) : (
                  <Empty title="No tokens yet">Name one above and press “Create token”.</Empty>
                )}
              </div>
            </Card>
            <Card title="Use the API">
              <div className="stack">
                <p className="small muted" style={{ margin: 0 }}>
                  Base URL <code data-testid="base-url">{origin}/v1</code>, model <code>muninn</code>. {secret ? 'The examples carry your new token.' : 'Put your token in MUNINN_TOKEN.'}
                </p>
                <Example title="openai SDK (JavaScript)" code={ex.sdk} />
                <Example title="curl" code={ex.curl} />
              </div>
            </Card>
          </div>
        )}
      </QueryView>
    </>
  );
}
