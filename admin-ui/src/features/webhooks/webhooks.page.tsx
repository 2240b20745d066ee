import { useState, type FormEvent } from 'react';
import { CreateWebhookDocument, DeleteWebhookDocument, RotateWebhookSecretDocument, SetWebhookEnabledDocument, WebhooksDocument, type WebhookFieldsFragment } from '../../gql/graphql';
import { Link } from '../../lib/router';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo, fmtDate } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView, Switch } from '../../components/ui';
import { CopyButton, Pager, usePaged } from '../../components/pager';
import { curlExample } from './curl-example';

const STATUS_TONE: Record<string, string> = { DONE: 'ok', FAILED: 'danger', CANCELLED: '', QUEUED: 'warn', PROCESSING: 'accent' };

/** The secret, once, with a curl call that works as it is. */
function SecretOnce({ name, secret, path, onDone }: { name: string; secret: string; path: string; onDone(): void }) {
  const example = curlExample(location.origin, path, secret);
  return (
    <div className="alert info" role="status" aria-label={`Secret of ${name}`}>
      <div>
        <strong>Copy the secret of “{name}” now:</strong> it is shown only once (only its hash is stored).
      </div>
      <div className="secret mono" data-testid="webhook-secret">
        {secret}
      </div>
      <div className="small" style={{ marginTop: 8 }}>
        Call it like this (the body reaches the assistant as data, never as instructions):
      </div>
      <pre className="secret mono" data-testid="curl-example">
        {example}
      </pre>
      <div className="row" style={{ marginTop: 6 }}>
        <CopyButton text={secret} label="Copy secret" />
        <CopyButton text={example} label="Copy curl" />
        <button className="small" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function CreateForm({ onCreated }: { onCreated(r: { name: string; secret: string; path: string }): void }) {
  const create = useMutation(CreateWebhookDocument);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [target, setTarget] = useState('');
  const [chatId, setChatId] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await create.run({ input: { name: name.trim(), instructions: instructions.trim() || null, targetChannel: target || null, targetChatId: target ? chatId.trim() : null } });
    if (r) {
      onCreated({ name: r.createWebhook.webhook.name, secret: r.createWebhook.secret, path: r.createWebhook.path });
      setName('');
      setInstructions('');
    }
  };
  return (
    <form className="stack" onSubmit={submit} aria-label="New webhook">
      <div className="grid cols-2">
        <label className="field">
          Name (the end of /hooks/&lt;name&gt;)
          <input required pattern="[a-z0-9][a-z0-9_\-]{0,63}" title="lowercase letters, digits, - and _" value={name} onChange={(e) => setName(e.target.value)} placeholder="ci-results" />
        </label>
        <label className="field">
          Result goes to
          <select value={target} onChange={(e) => setTarget(e.target.value)}>
            <option value="">My principal chat</option>
            {['telegram', 'whatsapp', 'web', 'tui'].map((c) => (
              <option key={c}>{c}</option>
            ))}
          </select>
        </label>
        {target ? (
          <label className="field">
            Chat id
            <input required value={chatId} onChange={(e) => setChatId(e.target.value)} />
          </label>
        ) : null}
      </div>
      <label className="field">
        Instructions for each call
        <textarea rows={2} maxLength={4000} value={instructions} onChange={(e) => setInstructions(e.target.value)} placeholder="Summarise the CI result; say who broke the build." />
      </label>
      <ErrorBox error={create.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={create.busy}>
          Create webhook
        </button>
      </div>
    </form>
  );
}

function WebhookCard({ hook: h, onChanged, onSecret }: { hook: WebhookFieldsFragment; onChanged(): void; onSecret(r: { name: string; secret: string; path: string }): void }) {
  const toggle = useMutation(SetWebhookEnabledDocument);
  const rotate = useMutation(RotateWebhookSecretDocument);
  const del = useMutation(DeleteWebhookDocument);
  return (
    <section className="card hook" aria-label={`Webhook ${h.name}`} data-hook={h.name}>
      <div className="row spread">
        <div>
          <h2 style={{ margin: 0 }}>
            <code>/hooks/{h.name}</code>
          </h2>
          <div className="small muted">
            {h.instructions ?? 'No instructions: the assistant tells what happened.'} · result to {h.targetChannel ? `${h.targetChannel}: ${h.targetChatId}` : "the owner's principal chat"} · last call {fmtAgo(h.lastCalledAt)}
          </div>
        </div>
        <div className="row">
          <Switch checked={h.enabled} label={`${h.name} enabled`} disabled={toggle.busy} onChange={async (v) => void ((await toggle.run({ name: h.name, enabled: v })) && onChanged())} />
          <ConfirmButton
            label="Rotate secret"
            title={`New secret for “${h.name}”?`}
            body="The old secret stops working at once; callers need the new one."
            confirmLabel="Rotate"
            onConfirm={async () => {
              const r = await rotate.run({ name: h.name });
              if (r) onSecret({ name: h.name, secret: r.rotateWebhookSecret.secret, path: r.rotateWebhookSecret.path });
            }}
          />
          <ConfirmButton danger label="Delete" title={`Delete “${h.name}”?`} body="Calls to it get 401 from now on. Its sessions stay readable." confirmLabel="Delete" onConfirm={async () => void ((await del.run({ name: h.name })) && onChanged())} />
        </div>
      </div>
      <ErrorBox error={toggle.error ?? rotate.error ?? del.error} />
      {h.deliveries.length ? (
        <div className="table-wrap">
          <table aria-label={`Deliveries of ${h.name}`}>
            <thead>
              <tr>
                <th>Received</th>
                <th>Status</th>
                <th>Turn</th>
              </tr>
            </thead>
            <tbody>
              {h.deliveries.map((d) => (
                <tr key={d.id}>
                  <td>{fmtDate(d.receivedAt)}</td>
                  <td>
                    <Badge value={d.status} tone={STATUS_TONE[d.status]} />
                  </td>
                  <td>
                    <Link to={`/sessions/${d.sessionId}`}>{d.turnId ? `turn ${d.turnId.slice(0, 8)}…` : 'session'}</Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <p className="small muted">No deliveries yet. Send one with the curl example shown when the secret was made (rotate the secret to see it again).</p>
      )}
    </section>
  );
}

export function WebhooksPage() {
  const q = useQuery(WebhooksDocument, {}, { pollMs: 5000 });
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ name: string; secret: string; path: string } | null>(null);
  const { items, pager } = usePaged(q.data?.webhooks ?? [], 10);
  return (
    <>
      <PageHeader
        title="Webhooks"
        subtitle="POST /hooks/<name> with the secret runs a turn of the owner; the result goes to their chat."
        actions={
          <button className="primary" onClick={() => setCreating(true)} disabled={creating}>
            New webhook
          </button>
        }
      />
      <div className="stack">
        {secret ? <SecretOnce {...secret} onDone={() => setSecret(null)} /> : null}
        {creating ? (
          <Card title="New webhook" actions={<button className="small" onClick={() => setCreating(false)}>Cancel</button>}>
            <CreateForm
              onCreated={(r) => {
                setCreating(false);
                setSecret(r);
                void q.refetch();
              }}
            />
          </Card>
        ) : null}
        <QueryView
          q={q}
          empty={(d) =>
            d.webhooks.length ? null : (
              <Card>
                <Empty title="No webhooks yet">Press “New webhook” to let another system (CI, monitoring, a form) start a turn of the assistant.</Empty>
              </Card>
            )
          }
        >
          {() => (
            <>
              {items.map((h) => (
                <WebhookCard key={h.id} hook={h} onChanged={() => void q.refetch()} onSecret={setSecret} />
              ))}
              <Pager {...pager} label="Webhooks" />
            </>
          )}
        </QueryView>
      </div>
    </>
  );
}
