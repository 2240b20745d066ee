import { useRef, useState, type FormEvent } from 'react';
import { LinkIdentityDocument, RenameUserDocument } from '../../gql/graphql';
import { useMutation } from '../../lib/use-graphql';
import { ErrorBox } from '../../components/ui';

/** A small modal form (native <dialog>) behind a button. */
function DialogForm({ label, title, submitLabel, busy, error, onSubmit, children }: {
  label: string; title: string; submitLabel: string; busy: boolean; error: Error | null; onSubmit(): Promise<boolean>; children: React.ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await onSubmit()) ref.current?.close();
  };
  return (
    <>
      <button type="button" className="small" onClick={() => ref.current?.showModal()}>
        {label}
      </button>
      <dialog ref={ref} aria-label={title}>
        <form className="stack" onSubmit={submit}>
          <h2>{title}</h2>
          {children}
          <ErrorBox error={error} />
          <div className="row" style={{ justifyContent: 'flex-end' }}>
            <button type="button" onClick={() => ref.current?.close()}>
              Cancel
            </button>
            <button type="submit" className="primary" disabled={busy}>
              {submitLabel}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** "Rename": changes a user's display name. */
export function RenameUserButton({ user, onDone }: { user: { id: string; displayName: string }; onDone(): void }) {
  const rename = useMutation(RenameUserDocument);
  const [name, setName] = useState(user.displayName);
  return (
    <DialogForm
      label="Rename"
      title={`Rename ${user.displayName}`}
      submitLabel="Save"
      busy={rename.busy}
      error={rename.error}
      onSubmit={async () => {
        const ok = !!(await rename.run({ userId: user.id, displayName: name.trim() }));
        if (ok) onDone();
        return ok;
      }}
    >
      <label className="field">
        Display name
        <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
      </label>
    </DialogForm>
  );
}

const CHANNELS = ['telegram', 'whatsapp', 'web', 'tui'];

/** "Link identity": ties a channel handle (Telegram user id, WhatsApp JID, …) to the user. */
export function LinkIdentityButton({ user, onDone }: { user: { id: string; displayName: string }; onDone(): void }) {
  const link = useMutation(LinkIdentityDocument);
  const [channel, setChannel] = useState('telegram');
  const [handle, setHandle] = useState('');
  return (
    <DialogForm
      label="Link identity"
      title={`Link an identity to ${user.displayName}`}
      submitLabel="Link"
      busy={link.busy}
      error={link.error}
      onSubmit={async () => {
        const ok = !!(await link.run({ input: { userId: user.id, channel, handle: handle.trim() } }));
        if (ok) (setHandle(''), onDone());
        return ok;
      }}
    >
      <label className="field">
        Channel
        <select value={channel} onChange={(e) => setChannel(e.target.value)}>
          {CHANNELS.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
      </label>
      <label className="field">
        Handle
        <input required value={handle} onChange={(e) => setHandle(e.target.value)} placeholder={channel === 'whatsapp' ? '491701234567@s.whatsapp.net' : channel === 'telegram' ? 'numeric user id, e.g. 123456789' : 'handle'} />
      </label>
      <p className="small muted" style={{ margin: 0 }}>
        Messages from this handle then act as {user.displayName}, with their trust.
      </p>
    </DialogForm>
  );
}
