import './pages.css';
import { useEffect, useState } from 'react';

/** Client-side paging of a list: the current page's items and the pager's props. */
export function usePaged<T>(items: readonly T[], size = 20) {
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(items.length / size));
  useEffect(() => {
    if (page > pages - 1) setPage(pages - 1);
  }, [page, pages]);
  const current = Math.min(page, pages - 1);
  return { items: items.slice(current * size, current * size + size), pager: { page: current, pages, total: items.length, size, setPage } };
}

/** "1–20 of 53" with previous and next buttons; nothing when everything fits on one page. */
export function Pager({ page, pages, total, size, setPage, label }: { page: number; pages: number; total: number; size: number; setPage(p: number): void; label: string }) {
  if (pages <= 1) return null;
  return (
    <nav className="row spread pager" aria-label={`${label} pages`}>
      <span className="small muted">
        {page * size + 1}–{Math.min(total, (page + 1) * size)} of {total}
      </span>
      <span className="row">
        <button type="button" className="small" disabled={page === 0} onClick={() => setPage(page - 1)}>
          Previous
        </button>
        <button type="button" className="small" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>
          Next
        </button>
      </span>
    </nav>
  );
}

/** A button that copies text and says so for a moment. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="small"
      onClick={async () => {
        try {
          await navigator.clipboard?.writeText(text);
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        } catch {
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}
