import { useId, useMemo, useState, type FormEvent } from 'react';
import { CreateBeatDocument, UpdateBeatDocument, type BeatFieldsFragment, type BeatKind } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { useMutation } from '../../lib/use-graphql';
import { fmtInZone, timeZones } from '../../lib/time-zone';
import { ErrorBox } from '../../components/ui';
import { useCronPreview } from './use-cron-preview';

const TARGETS = ['telegram', 'whatsapp', 'web', 'tui'] as const;
const EXAMPLES: Array<[string, string]> = [
  ['0 7 * * *', 'every day at 07:00'],
  ['30 8 * * 1-5', 'weekdays at 08:30'],
  ['0 */4 * * *', 'every 4 hours'],
  ['0 9 1 * *', 'the 1st of each month at 09:00'],
];

/** The default time zone of a new beat: the browser's own. */
function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** Creates a beat or edits one; the cron field previews the next five runs in the beat's time zone. */
export function BeatForm({ beat, onDone, onCancel }: { beat?: BeatFieldsFragment; onDone(b: BeatFieldsFragment): void; onCancel(): void }) {
  const id = useId();
  const { me } = useAuth();
  const [name, setName] = useState(beat?.name ?? '');
  const [kind, setKind] = useState<BeatKind>(beat?.kind ?? 'TASK');
  const [text, setText] = useState(beat?.text ?? '');
  const [mode, setMode] = useState<'cron' | 'once'>(beat && !beat.cron ? 'once' : 'cron');
  const [cron, setCron] = useState(beat?.cron ?? '0 7 * * *');
  const [at, setAt] = useState(beat?.at ? beat.at.slice(0, 16) : '');
  const [timezone, setTimezone] = useState(beat?.timezone ?? localZone());
  const [target, setTarget] = useState(beat?.targetChannel ?? '');
  const [chatId, setChatId] = useState(beat?.targetChatId ?? '');
  const [enabled, setEnabled] = useState(beat?.enabled ?? true);
  const zones = useMemo(timeZones, []);
  const { preview, checking } = useCronPreview(mode === 'cron' ? cron : '', timezone);
  const create = useMutation(CreateBeatDocument);
  const update = useMutation(UpdateBeatDocument);
  const busy = create.busy || update.busy;

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const timing = mode === 'cron' ? { cron: cron.trim(), at: null } : { cron: null, at: at ? new Date(at).toISOString() : null };
    const common = { name: name.trim(), text, kind, timezone, targetChannel: target || null, targetChatId: target ? chatId.trim() || null : null, enabled, ...timing };
    if (beat) {
      const r = await update.run({ id: beat.id, input: common });
      if (r) onDone(r.updateBeat);
    } else {
      const r = await create.run({ input: common });
      if (r) onDone(r.createBeat);
    }
  };

  return (
    <form className="stack" onSubmit={submit} aria-label={beat ? `Edit beat ${beat.name}` : 'New beat'}>
      <div className="grid cols-2">
        <label className="field">
          Name
          <input required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} placeholder="morning briefing" />
        </label>
        <label className="field">
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value as BeatKind)}>
            <option value="TASK">Task: the assistant runs the instruction</option>
            <option value="REMINDER">Reminder: the text is sent as it is</option>
          </select>
        </label>
      </div>
      <label className="field">
        {kind === 'TASK' ? 'Instruction' : 'Reminder text'}
        <textarea required rows={3} maxLength={8000} value={text} onChange={(e) => setText(e.target.value)} placeholder={kind === 'TASK' ? 'Summarise my unread mail and the weather.' : 'Take the bins out.'} />
      </label>
      <fieldset className="stack fieldset">
        <legend>Schedule</legend>
        <div className="row" role="radiogroup" aria-label="Schedule kind">
          <label className="row">
            <input type="radio" name={`${id}-mode`} checked={mode === 'cron'} onChange={() => setMode('cron')} /> Repeating (cron)
          </label>
          <label className="row">
            <input type="radio" name={`${id}-mode`} checked={mode === 'once'} onChange={() => setMode('once')} /> Once
          </label>
        </div>
        <div className="grid cols-2">
          {mode === 'cron' ? (
            <label className="field">
              Cron expression
              <input
                className="mono"
                value={cron}
                onChange={(e) => setCron(e.target.value)}
                aria-describedby={`${id}-preview`}
                aria-invalid={preview ? !preview.valid : undefined}
                spellCheck={false}
                autoComplete="off"
              />
            </label>
          ) : (
            <label className="field">
              Date and time
              <input type="datetime-local" required value={at} onChange={(e) => setAt(e.target.value)} />
            </label>
          )}
          <label className="field">
            Time zone
            <input list={`${id}-zones`} value={timezone} onChange={(e) => setTimezone(e.target.value)} />
            <datalist id={`${id}-zones`}>
              {zones.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </label>
        </div>
        {mode === 'cron' ? (
          <div id={`${id}-preview`} className="cron-preview" aria-live="polite" data-testid="cron-preview">
            {!cron.trim() ? (
              <span className="muted">Five fields: minute hour day-of-month month day-of-week. Examples: {EXAMPLES.map(([c, w]) => `${c} (${w})`).join(', ')}.</span>
            ) : checking && !preview ? (
              <span className="muted">Checking…</span>
            ) : preview && !preview.valid ? (
              <div className="alert" role="alert" data-testid="cron-error">
                {preview.error}
              </div>
            ) : preview ? (
              <div>
                <strong>{preview.description}</strong> <span className="muted small">({preview.timezone})</span>
                <div className="small muted">Next runs:</div>
                <ol className="runs-preview" aria-label="Next five runs">
                  {preview.nextRuns.map((r) => (
                    <li key={r}>{fmtInZone(r, preview.timezone)}</li>
                  ))}
                </ol>
              </div>
            ) : null}
          </div>
        ) : null}
      </fieldset>
      <fieldset className="stack fieldset">
        <legend>Deliver to</legend>
        <div className="grid cols-2">
          <label className="field">
            Channel
            <select
              value={target}
              onChange={(e) => {
                setTarget(e.target.value);
                // Web and TUI chats are addressed by user id: the owner's own by default.
                if ((e.target.value === 'web' || e.target.value === 'tui') && !chatId) setChatId(beat?.userId ?? me?.id ?? '');
              }}
            >
              <option value="">The owner&apos;s principal chat</option>
              {TARGETS.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </label>
          {target ? (
            <label className="field">
              Chat id
              <input required value={chatId} onChange={(e) => setChatId(e.target.value)} placeholder={target === 'telegram' ? '123456789' : target === 'whatsapp' ? '4915112345678@s.whatsapp.net' : 'user id'} />
            </label>
          ) : null}
        </div>
      </fieldset>
      <label className="row">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      <ErrorBox error={create.error ?? update.error} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy || (mode === 'cron' && preview?.valid === false)}>
          {beat ? 'Save beat' : 'Create beat'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
