/** A readable form of one detail value: words for booleans, short ids, nested objects as "key: value". */
function text(value: unknown): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return value.toLocaleString();
  if (Array.isArray(value)) return value.map(text).join(', ');
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${label(k)}: ${text(v)}`)
    .join('; ');
}

/** `fromTrust` → "from trust", `user_id` → "user id". */
function label(key: string): string {
  return key
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
}

/** The details of an audit entry as a small definition list instead of raw JSON. */
export function AuditDetails({ details, nameOf }: { details: unknown; nameOf?: (userId: string) => string | undefined }) {
  if (details === null || details === undefined) return null;
  if (typeof details !== 'object' || Array.isArray(details)) return <span className="small">{text(details)}</span>;
  const entries = Object.entries(details as Record<string, unknown>);
  if (!entries.length) return null;
  return (
    <dl className="facts small audit-details">
      {entries.map(([k, v]) => (
        <div key={k} style={{ display: 'contents' }}>
          <dt>{label(k)}</dt>
          <dd>{/user_?id$/i.test(k) && typeof v === 'string' ? (nameOf?.(v) ?? v) : text(v)}</dd>
        </div>
      ))}
    </dl>
  );
}
