import { useRef, useState, type DragEvent } from 'react';
import { useAuth } from '../../lib/auth';
import { uploadFile } from './upload-file';

/** Extensions the server reads (it checks again, and reads the content to be sure). */
export const ACCEPT = '.pdf,.docx,.md,.markdown,.txt,.text,.html,.htm,.csv';

interface Sending {
  key: number;
  name: string;
  percent: number;
  error: string | null;
}

let nextKey = 1;

/**
 * Drop files here, or choose them: each goes to `POST /uploads` with its own progress bar; a refused file
 * says why (type, size, trust). `onUploaded` runs after each accepted file, so the list shows it QUEUED.
 */
export function UploadZone({ scopes, onUploaded }: { scopes: string[]; onUploaded(): void }) {
  const { client } = useAuth();
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  const [scope, setScope] = useState(scopes[0]!);
  const [sending, setSending] = useState<Sending[]>([]);
  const update = (key: number, patch: Partial<Sending>) => setSending((list) => list.map((s) => (s.key === key ? { ...s, ...patch } : s)));

  const send = async (files: File[]) => {
    if (!client) return;
    for (const file of files) {
      const key = nextKey++;
      setSending((list) => [...list, { key, name: file.name, percent: 0, error: null }]);
      const outcome = await uploadFile(client.token, file, scope, (percent) => update(key, { percent }));
      if (outcome.ok) {
        setSending((list) => list.filter((s) => s.key !== key));
        onUploaded();
      } else update(key, { error: outcome.message });
    }
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    void send([...e.dataTransfer.files]);
  };

  return (
    <div className="stack">
      <div
        className={`drop-zone ${over ? 'over' : ''}`}
        data-testid="drop-zone"
        onDragOver={(e) => (e.preventDefault(), setOver(true))}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <p style={{ margin: 0 }}>
          <strong>Drop files here</strong> or{' '}
          <button type="button" className="link-button" onClick={() => input.current?.click()}>
            choose files
          </button>
        </p>
        <p className="small muted" style={{ margin: '4px 0 0' }}>
          PDF (with a text layer), Word (.docx), Markdown, plain text, HTML or CSV.
        </p>
        <input
          ref={input}
          type="file"
          multiple
          accept={ACCEPT}
          aria-label="Files to upload"
          className="sr-only"
          tabIndex={-1}
          onChange={(e) => {
            const files = [...(e.target.files ?? [])];
            e.target.value = '';
            void send(files);
          }}
        />
      </div>
      {scopes.length > 1 ? (
        <label className="row small">
          Add as
          <select aria-label="Scope of new documents" value={scope} onChange={(e) => setScope(e.target.value)}>
            {scopes.map((s) => (
              <option key={s} value={s}>
                {s === 'user' ? 'private (mine)' : 'global (everyone)'}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {sending.length ? (
        <ul className="plain" aria-label="Uploads">
          {sending.map((s) => (
            <li key={s.key}>
              <div className="row spread small">
                <span>{s.name}</span>
                {s.error ? (
                  <button type="button" className="small ghost" onClick={() => setSending((list) => list.filter((x) => x.key !== s.key))}>
                    Dismiss
                  </button>
                ) : (
                  <span>{s.percent}%</span>
                )}
              </div>
              {s.error ? (
                <div className="alert" role="alert">
                  {s.error}
                </div>
              ) : (
                <div className="progress" role="progressbar" aria-label={`Uploading ${s.name}`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={s.percent}>
                  <div style={{ width: `${s.percent}%` }} />
                </div>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
