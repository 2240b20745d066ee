import { useState, type FormEvent } from 'react';
import {
  DeleteMcpCredentialDocument,
  McpServersDocument,
  RestartMcpServerDocument,
  SetMcpCredentialDocument,
  StartMcpOAuthDocument,
  type McpServerFieldsFragment,
} from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { fmtAgo } from '../../lib/format';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView, TableHead } from '../../components/ui';

const STATE_TONE: Record<string, string> = { READY: 'ok', CONNECTING: 'accent', FAILED: 'danger', IDLE: '', CLOSED: '', DISABLED: 'warn' };

/** Per-user credentials: the user's own Authorization header (per_user) or an OAuth sign-in (oauth). */
function Connect({ server: s, onChanged }: { server: McpServerFieldsFragment; onChanged(): void }) {
  const set = useMutation(SetMcpCredentialDocument);
  const del = useMutation(DeleteMcpCredentialDocument);
  const start = useMutation(StartMcpOAuthDocument);
  const [token, setToken] = useState('');
  const [link, setLink] = useState<string | null>(null);
  if (s.auth === 'NONE') return null;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await set.run({ server: s.name, headers: { Authorization: `Bearer ${token.trim()}` } });
    if (r) {
      setToken('');
      onChanged();
    }
  };
  return (
    <div className="stack" aria-label={`Your connection to ${s.name}`} role="group">
      <div className="row">
        <strong>Your account:</strong> {s.connected ? <Badge value="connected" tone="ok" /> : <Badge value="not connected" tone="warn" />}
        {s.connected ? (
          <ConfirmButton label="Disconnect" title={`Disconnect from “${s.name}”?`} body="Your stored credentials for this server are deleted; its tools stop working for you." confirmLabel="Disconnect" onConfirm={async () => void ((await del.run({ server: s.name })) && onChanged())} />
        ) : null}
      </div>
      {s.auth === 'PER_USER' ? (
        <form className="row" onSubmit={submit} aria-label={`Token for ${s.name}`}>
          <label className="field" style={{ flex: 1 }}>
            Your token for {s.name} (sent as Authorization: Bearer …, stored encrypted, never shown again)
            <input type="password" required autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={set.busy}>
            Save token
          </button>
        </form>
      ) : (
        <div className="row">
          <button
            className="primary"
            disabled={start.busy}
            onClick={async () => {
              const r = await start.run({ server: s.name });
              if (r) setLink(r.startMcpOAuth);
            }}
          >
            {s.connected ? 'Sign in again' : 'Sign in'}
          </button>
          {link ? (
            <a href={link} target="_blank" rel="noreferrer noopener" data-testid="oauth-link">
              Open the sign-in page of {s.name}
            </a>
          ) : null}
        </div>
      )}
      <ErrorBox error={set.error ?? del.error ?? start.error} />
    </div>
  );
}

function ServerCard({ server: s, admin, onChanged }: { server: McpServerFieldsFragment; admin: boolean; onChanged(): void }) {
  const restart = useMutation(RestartMcpServerDocument);
  return (
    <section className="card" aria-label={`MCP server ${s.name}`} data-server={s.name}>
      <div className="row spread">
        <div>
          <h2 style={{ margin: 0 }}>{s.name}</h2>
          <div className="small muted">
            {s.command || s.url ? (
              <>
                <code>{s.transport === 'STDIO' ? [s.command, ...s.args].join(' ') : s.url}</code> ·{' '}
              </>
            ) : null}
            {[
              s.source === 'CONFIG' ? 'from the config file' : 'added in the console',
              `auth ${s.auth.toLowerCase().replace('_', '-')}`,
              `from ${s.minTrust}`,
              s.requiresApproval ? 'calls need approval' : null,
              s.expose === 'ON_DEMAND' ? 'tools found on demand' : 'tools always offered',
              s.connectedAt ? `connected ${fmtAgo(s.connectedAt)}` : null,
              admin && s.pid ? `pid ${s.pid}` : null,
            ]
              .filter(Boolean)
              .join(' · ')}
          </div>
        </div>
        <div className="row">
          <Badge value={s.state} tone={STATE_TONE[s.state]} />
          {admin ? (
            <button className="small" disabled={restart.busy} onClick={async () => void ((await restart.run({ name: s.name })) && onChanged())}>
              Restart
            </button>
          ) : null}
        </div>
      </div>
      {admin && s.lastError ? (
        <div className="alert danger" role="alert" aria-label={`Last error of ${s.name}`}>
          {s.lastError}
        </div>
      ) : null}
      <ErrorBox error={restart.error} />
      <Connect server={s} onChanged={onChanged} />
      {s.tools.length ? (
        <div className="table-wrap">
          <table aria-label={`Tools of ${s.name}`}>
            <TableHead columns={['Tool', 'Description', 'Trust', 'Approval']} />
            <tbody>
              {s.tools.map((t) => (
                <tr key={t.name}>
                  <td>
                    <code>{t.name}</code>
                  </td>
                  <td className="small">{t.description}</td>
                  <td>{t.minTrust}</td>
                  <td>{t.requiresApproval ? 'needed' : '–'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="small muted">No tools listed yet{s.auth !== 'NONE' && !s.connected ? ': connect your account first' : s.state === 'FAILED' ? ': the server could not be reached' : ''}.</p>
      )}
    </section>
  );
}

/** MCP servers: state, last error and tools (ADMIN restarts them), and each user's own connection. */
export function McpPage() {
  const { me } = useAuth();
  const admin = trustAtLeast(me?.trust, 'ADMIN');
  const q = useQuery(McpServersDocument, {}, { pollMs: 5000 });
  return (
    <>
      <PageHeader title="MCP servers" subtitle="Tools of MCP servers, named <server>__<tool>, offered under each user's trust; per-user servers use each user's own credentials." />
      <div className="stack">
        <QueryView
          q={q}
          empty={(d) =>
            d.mcpServers.length ? null : (
              <Card>
                <Empty title="No MCP servers">{admin ? 'Declare servers in mcp.servers of the config file, or add one with the GraphQL mutation upsertMcpServer.' : 'No MCP server is available to you.'}</Empty>
              </Card>
            )
          }
        >
          {(d) => (
            <>
              {d.mcpServers.map((s) => (
                <ServerCard key={s.name} server={s} admin={admin} onChanged={() => void q.refetch()} />
              ))}
            </>
          )}
        </QueryView>
      </div>
    </>
  );
}
