import { useEffect, useState } from 'react';
import { CreateLinkCodeDocument, type CreateLinkCodeMutation, type MyAccountQuery } from '../../gql/graphql';
import { useMutation } from '../../lib/use-graphql';
import { fmtDate } from '../../lib/format';
import { Badge, Card, ErrorBox } from '../../components/ui';
import { CopyButton } from '../../components/pager';

type Code = CreateLinkCodeMutation['createLinkCode'];

/** Linked identities, and a one-time code to link a Telegram or WhatsApp account by sending `/link CODE`. */
export function LinkChannelCard({ me, onLinked, refetch }: { me: MyAccountQuery['me']; onLinked(key: string): void; refetch(): Promise<void> }) {
  const create = useMutation(CreateLinkCodeDocument);
  const [code, setCode] = useState<Code | null>(null);
  const [known] = useState(() => new Set(me.identities.map((i) => i.key)));
  // While a code is shown, look for the new identity every few seconds.
  useEffect(() => {
    if (!code) return;
    const t = setInterval(() => void refetch(), 2500);
    const expire = setTimeout(() => setCode(null), new Date(code.expiresAt).getTime() - Date.now());
    return () => (clearInterval(t), clearTimeout(expire));
  }, [code, refetch]);
  useEffect(() => {
    const added = me.identities.find((i) => !known.has(i.key));
    if (added && code) {
      known.add(added.key);
      setCode(null);
      onLinked(added.key);
    }
  }, [me.identities, known, code, onLinked]);
  return (
    <Card title="Linked channels">
      <div className="stack">
        <ul className="plain" aria-label="Your identities">
          {me.identities.map((i) => (
            <li key={i.id} className="row">
              <Badge value={i.channel} tone="accent" /> <span className="mono">{i.handle}</span> {i.displayName ? <span className="muted">({i.displayName})</span> : null}
            </li>
          ))}
        </ul>
        {code ? (
          <div className="alert info" role="status">
            <div>
              Send this to the Muninn bot in a direct chat on Telegram or WhatsApp (it works once, until {fmtDate(code.expiresAt)}):
            </div>
            <div className="secret mono link-code" data-testid="link-command">
              {code.command}
            </div>
            <div className="row" style={{ marginTop: 6 }}>
              <CopyButton text={code.command} />
              <span className="small muted">
                <span className="spinner" aria-hidden="true" /> Waiting for your message…
              </span>
            </div>
          </div>
        ) : (
          <div className="row">
            <button className="primary" onClick={async () => setCode((await create.run({}))?.createLinkCode ?? null)} disabled={create.busy}>
              Link Telegram or WhatsApp
            </button>
            <span className="small muted">Then messages from that account count as yours, with your trust.</span>
          </div>
        )}
        <ErrorBox error={create.error} />
      </div>
    </Card>
  );
}
