import { useState, type FormEvent } from 'react';
import { ForgetChannelSetupDocument, SaveTelegramBotDocument, TurnOnWhatsAppDocument, type ChannelSetupListQuery, type ChannelsQuery } from '../../gql/graphql';
import { useMutation } from '../../lib/use-graphql';
import { fmtDate } from '../../lib/format';
import { Badge, ConfirmButton, ErrorBox } from '../../components/ui';
import { QrCode } from './qr-code';

type Setup = ChannelSetupListQuery['channelSetups'][number];
type Status = ChannelsQuery['channels'][number];

interface CardProps {
  setup: Setup | undefined;
  status: Status | undefined;
  /** OWNERs change the set-up; ADMINs see it. */
  canEdit: boolean;
  onChanged(): Promise<unknown>;
}

/** Where the settings come from, in words. */
function Source({ setup, file }: { setup: Setup | undefined; file: string }) {
  if (setup?.source === 'CONSOLE') return <>Set up here{setup.updatedAt ? ` on ${fmtDate(setup.updatedAt)}` : ''}; stored encrypted.</>;
  if (setup?.source === 'CONFIG') return <>Set up in the config file ({file}).</>;
  return <>Not set up yet.</>;
}

function Header({ title, status, setup }: { title: string; status: Status | undefined; setup: Setup | undefined }) {
  return (
    <div className="row spread">
      <h2 style={{ margin: 0 }}>{title}</h2>
      {status ? <Badge value={status.state} /> : <Badge value={setup?.source === 'NONE' ? 'not set up' : 'STOPPED'} tone="" />}
    </div>
  );
}

function Forget({ channel, label, what, onDone }: { channel: string; label: string; what: string; onDone(): Promise<unknown> }) {
  const forget = useMutation(ForgetChannelSetupDocument);
  return (
    <>
      <ConfirmButton
        danger
        label={label}
        title={`Remove the ${channel} set-up?`}
        body={`${what} The channel stops now, unless the config file sets it up.`}
        confirmLabel="Remove"
        onConfirm={async () => void ((await forget.run({ channel })) !== null && (await onDone()))}
      />
      <ErrorBox error={forget.error} />
    </>
  );
}

/** Telegram: enter the bot token from @BotFather; it is checked with Telegram, stored encrypted and applied at once. */
export function TelegramCard({ setup, status, canEdit, onChanged }: CardProps) {
  const save = useMutation(SaveTelegramBotDocument);
  const [token, setToken] = useState('');
  const [saved, setSaved] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(null);
    const r = await save.run({ botToken: token });
    if (!r) return;
    setToken('');
    setSaved(r.setTelegramBot.label);
    await onChanged();
  };
  return (
    <section className="card stack" aria-label="Telegram set-up" data-channel="telegram">
      <Header title="Telegram" status={status} setup={setup} />
      <div className="small">
        {setup?.label ? (
          <>
            Bot <strong>{setup.label}</strong>.{' '}
          </>
        ) : null}
        <Source setup={setup} file="channels.telegram.bot_token or TELEGRAM_BOT_TOKEN" />
      </div>
      {status?.lastError ? (
        <div className="alert" role="alert">
          {status.lastError}
        </div>
      ) : null}
      {saved ? (
        <div className="alert ok" role="status">
          Token accepted by Telegram for <strong>{saved}</strong>. The bot is starting now; no restart needed.
        </div>
      ) : null}
      {canEdit ? (
        <form className="stack" onSubmit={submit} aria-label="Telegram bot token">
          <ol className="small steps">
            <li>
              In Telegram, open <strong>@BotFather</strong> and send <code>/newbot</code> (or <code>/mybots</code> → API Token for a bot you have).
            </li>
            <li>Paste the token here. It is checked with Telegram, stored encrypted, and never shown again.</li>
          </ol>
          <label className="field">
            Bot token
            <input
              type="password"
              required
              autoComplete="off"
              spellCheck={false}
              maxLength={200}
              value={token}
              onChange={(e) => setToken(e.target.value)}
              placeholder="123456789:AA…"
            />
          </label>
          <ErrorBox error={save.error} />
          <div className="row">
            <button type="submit" className="primary" disabled={save.busy || !token.trim()}>
              {save.busy ? 'Checking with Telegram…' : setup?.source === 'CONSOLE' ? 'Replace token' : 'Save and connect'}
            </button>
            {setup?.source === 'CONSOLE' ? <Forget channel="telegram" label="Remove token" what="The token entered here is deleted." onDone={onChanged} /> : null}
          </div>
        </form>
      ) : (
        <p className="small muted">Only an OWNER can change how Telegram is set up.</p>
      )}
    </section>
  );
}

/** WhatsApp: turn it on, then scan the QR shown here with the phone that should carry the assistant. */
export function WhatsAppCard({ setup, status, canEdit, onChanged }: CardProps) {
  const enable = useMutation(TurnOnWhatsAppDocument);
  const on = setup?.source === 'CONSOLE' || setup?.source === 'CONFIG';
  return (
    <section className="card stack" aria-label="WhatsApp set-up" data-channel="whatsapp">
      <Header title="WhatsApp" status={status} setup={setup} />
      <div className="small">
        <Source setup={setup} file="channels.whatsapp.enabled or WHATSAPP_ENABLED" />
      </div>
      {status?.state === 'NEEDS_LINK' ? (
        status.qr ? (
          <div className="stack" aria-label="Link WhatsApp">
            <ol className="small steps">
              <li>On the phone, open WhatsApp → Settings → Linked devices → Link a device.</li>
              <li>Scan this code. It changes every few seconds; this page follows.</li>
            </ol>
            <QrCode text={status.qr} />
          </div>
        ) : (
          <p className="small muted" role="status">
            Waiting for the linking code from WhatsApp…
          </p>
        )
      ) : null}
      {status?.state === 'CONNECTED' ? (
        <div className="alert ok" role="status">
          Linked and connected: messages to this WhatsApp account reach the assistant.
        </div>
      ) : null}
      {status?.lastError && status.state !== 'CONNECTED' ? (
        <div className="alert" role="alert">
          {status.lastError}
        </div>
      ) : null}
      {canEdit ? (
        <div className="stack">
          {!on ? (
            <p className="small">Muninn joins as a linked device of a phone’s WhatsApp account. Turn it on, then scan the code that appears here.</p>
          ) : null}
          <ErrorBox error={enable.error} />
          <div className="row">
            {setup?.source !== 'CONSOLE' ? (
              <button type="button" className="primary" disabled={enable.busy} onClick={async () => void ((await enable.run({})) && (await onChanged()))}>
                {enable.busy ? 'Turning on…' : 'Turn on WhatsApp'}
              </button>
            ) : (
              <Forget channel="whatsapp" label="Turn off WhatsApp" what="WhatsApp is turned off here; the link to the phone is kept for next time." onDone={onChanged} />
            )}
          </div>
        </div>
      ) : (
        <p className="small muted">Only an OWNER can change how WhatsApp is set up.</p>
      )}
    </section>
  );
}
