/** Small SVG charts in the theme's colours: stacked bars per key, one series per colour. */
export interface Series {
  name: string;
  values: number[];
}

const COLORS = ['var(--chart-1)', 'var(--chart-2)', 'var(--chart-3)'];

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  const n = v / p;
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * p;
}

function short(n: number): string {
  return n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n);
}

/**
 * Stacked bars per label. With nothing to show (every value 0) it shows `empty` in a frame of the same
 * height instead of an axis with no bars; `format` writes the axis values (e.g. dollars).
 */
export function BarChart({ labels, series, title, height = 180, format = short, empty = 'Nothing in this period.' }: {
  labels: string[];
  series: Series[];
  title: string;
  height?: number;
  format?: (n: number) => string;
  empty?: string;
}) {
  const width = 600;
  const pad = { l: 48, r: 8, t: 8, b: 28 };
  const totals = labels.map((_, i) => series.reduce((s, x) => s + (x.values[i] ?? 0), 0));
  if (!totals.some((v) => v > 0)) {
    return (
      <figure className="chart chart-empty" style={{ margin: 0, aspectRatio: `${width} / ${height}` }} role="img" aria-label={`${title}: ${empty}`}>
        <span>{empty}</span>
      </figure>
    );
  }
  const max = niceMax(Math.max(0, ...totals));
  const innerW = width - pad.l - pad.r;
  const innerH = height - pad.t - pad.b;
  const bw = labels.length ? innerW / labels.length : innerW;
  const every = Math.max(1, Math.ceil(labels.length / 8));
  const y = (v: number) => pad.t + innerH - (v / max) * innerH;
  return (
    <figure className="chart" style={{ margin: 0 }}>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={title}>
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line className="axis" x1={pad.l} x2={width - pad.r} y1={y(max * f)} y2={y(max * f)} />
            <text x={pad.l - 6} y={y(max * f) + 3} textAnchor="end">
              {format(max * f)}
            </text>
          </g>
        ))}
        {labels.map((label, i) => {
          let acc = 0;
          return (
            <g key={label}>
              {series.map((s, si) => {
                const v = s.values[i] ?? 0;
                const top = y(acc + v);
                const h = y(acc) - top;
                acc += v;
                if (v <= 0) return null;
                return (
                  <rect key={s.name} x={pad.l + i * bw + bw * 0.15} width={bw * 0.7} y={top} height={Math.max(0, h)} fill={COLORS[si % COLORS.length]} rx={2}>
                    <title>{`${label} · ${s.name}: ${v.toLocaleString()}`}</title>
                  </rect>
                );
              })}
              {i % every === 0 ? (
                <text x={pad.l + i * bw + bw / 2} y={height - 10} textAnchor="middle">
                  {label.length > 12 ? `${label.slice(0, 11)}…` : label}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption className="legend">
        {series.map((s, i) => (
          <span key={s.name}>
            <i style={{ background: COLORS[i % COLORS.length] }} />
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/** Consecutive days (YYYY-MM-DD, UTC) from `from` to `to` inclusive. */
export function dayRange(from: Date, to: Date): string[] {
  const out: string[] = [];
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  while (d <= to) {
    out.push(d.toISOString().slice(0, 10));
    d.setUTCDate(d.getUTCDate() + 1);
  }
  return out;
}
