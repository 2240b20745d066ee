import { useEffect, useRef, useState, type ReactNode } from 'react';
import type { GraphQLRequestError } from '../lib/graphql-client';
import type { QueryState } from '../lib/use-graphql';
import { applyTheme, storedTheme, type ThemeChoice } from '../lib/theme';

export function PageHeader({ title, subtitle, actions }: { title: string; subtitle?: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Muninn`;
  }, [title]);
  return (
    <header className="page-head">
      <div>
        <h1>{title}</h1>
        {subtitle ? <p>{subtitle}</p> : null}
      </div>
      {actions ? <div className="row">{actions}</div> : null}
    </header>
  );
}

export function Card({ title, actions, children, className }: { title?: string; actions?: ReactNode; children: ReactNode; className?: string }) {
  return (
    <section className={`card ${className ?? ''}`} aria-label={title}>
      {title || actions ? (
        <div className="row spread" style={{ marginBottom: 10 }}>
          {title ? <h2 style={{ margin: 0 }}>{title}</h2> : <span />}
          {actions}
        </div>
      ) : null}
      {children}
    </section>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state" role="status">
      <span className="spinner" aria-hidden="true" /> {label}
    </div>
  );
}

export function ErrorBox({ error, onRetry }: { error: GraphQLRequestError | Error | null; onRetry?: () => void }) {
  if (!error) return null;
  const code = 'code' in error ? (error as GraphQLRequestError).code : null;
  return (
    <div className="alert" role="alert">
      {code === 'FORBIDDEN' ? 'Not allowed: ' : ''}
      {error.message}
      {onRetry ? (
        <>
          {' '}
          <button className="small" onClick={onRetry}>
            Retry
          </button>
        </>
      ) : null}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state">
      <strong>{title}</strong>
      {children}
    </div>
  );
}

/** Loading, error and empty states of a query in one place; renders `children(data)` otherwise. */
export function QueryView<R>({ q, empty, children }: { q: QueryState<R>; empty?: (data: R) => ReactNode | null; children: (data: R) => ReactNode }) {
  if (q.error && !q.data) return <ErrorBox error={q.error} onRetry={() => void q.refetch()} />;
  if (!q.data) return <Loading />;
  const e = empty?.(q.data);
  return <>{e ?? children(q.data)}</>;
}

const TONES: Record<string, string> = {
  OWNER: 'accent', ADMIN: 'accent', TRUSTED: 'ok', MEMBER: '', GUEST: 'warn', BLOCKED: 'danger',
  ACTIVE: 'ok', ARCHIVED: '', PENDING: 'warn', APPROVED: 'ok', DENIED: 'danger', EXPIRED: '',
  ALLOWED_ONCE: 'ok', ALLOWED_ALWAYS: 'ok', CONNECTED: 'ok', POLLING: 'ok', WEBHOOK: 'ok', STARTING: 'warn',
  NEEDS_LINK: 'warn', ERROR: 'danger', STOPPED: '', failed: 'danger', completed: 'ok', active: 'accent', waiting: 'warn', delayed: '',
  ok: 'ok', unavailable: 'danger',
};

export function Badge({ value, tone }: { value: string; tone?: string }) {
  return <span className={`badge ${tone ?? TONES[value] ?? ''}`}>{value}</span>;
}

export function Switch({ checked, onChange, label, disabled }: { checked: boolean; onChange(v: boolean): void; label: string; disabled?: boolean }) {
  return <button type="button" role="switch" className="switch" aria-checked={checked} aria-label={label} title={label} disabled={disabled} onClick={() => onChange(!checked)} />;
}

/** A modal confirmation (native <dialog>: focus trap and Escape come with it). */
export function ConfirmButton({ label, title, body, confirmLabel, onConfirm, danger, className }: {
  label: ReactNode; title: string; body: ReactNode; confirmLabel: string; onConfirm(): void | Promise<void>; danger?: boolean; className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  return (
    <>
      <button type="button" className={className ?? (danger ? 'danger small' : 'small')} onClick={() => ref.current?.showModal()}>
        {label}
      </button>
      <dialog ref={ref} aria-label={title}>
        <h2>{title}</h2>
        <div style={{ marginBottom: 16 }}>{body}</div>
        <div className="row" style={{ justifyContent: 'flex-end' }}>
          <button type="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button
            type="button"
            className={danger ? 'danger solid' : 'primary'}
            disabled={busy}
            onClick={async () => {
              setBusy(true);
              try {
                await onConfirm();
              } finally {
                setBusy(false);
                ref.current?.close();
              }
            }}
          >
            {confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<ThemeChoice>(storedTheme);
  useEffect(() => applyTheme(theme), [theme]);
  return (
    <label className="field">
      Theme
      <select value={theme} onChange={(e) => setTheme(e.target.value as ThemeChoice)} aria-label="Theme">
        <option value="system">System</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

/** A table header row; `{ label, num: true }` right-aligns a numeric column. */
export function TableHead({ columns }: { columns: Array<string | { label: string; num: true }> }) {
  return (
    <thead>
      <tr>
        {columns.map((c, i) => (typeof c === 'string' ? <th key={i}>{c}</th> : <th key={i} className="num">{c.label}</th>))}
      </tr>
    </thead>
  );
}
