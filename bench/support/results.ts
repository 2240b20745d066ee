import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fmt, type Summary } from './stats';

/** One printed row: a figure with its same-run floor, the ratio between them and the issue's target. */
export interface ResultRow {
  benchmark: string;
  /** Latency percentiles (ms), when the row measures latency. */
  latency?: Summary;
  /** Operations per second, when the row measures throughput. */
  throughput?: number;
  /** A single figure that is neither (MiB, ms to ready, recall, bytes…), with its unit. */
  value?: { figure: number | string; unit: string };
  /** Name of the floor and its p50 (ms) or throughput. */
  floor?: { name: string; p50?: number; throughput?: number };
  target: string;
  /** Whether the target holds; null when it is not a plain comparison. */
  meets: boolean | null;
  note?: string;
  extra?: Record<string, unknown>;
}

export class Results {
  readonly rows: ResultRow[] = [];
  readonly floors: Record<string, { latency?: Summary; throughput?: number }> = {};
  readonly startedAt = new Date();

  constructor(readonly quick: boolean) {}

  floor(name: string, data: { latency?: Summary; throughput?: number }): void {
    this.floors[name] = data;
    const l = data.latency;
    console.log(`  floor ${name}: ${l ? `p50 ${fmt(l.p50, 2)} ms p90 ${fmt(l.p90, 2)} p99 ${fmt(l.p99, 2)}` : ''}${data.throughput ? ` ${fmt(data.throughput, 0)}/s` : ''}`);
  }

  add(row: ResultRow): void {
    this.rows.push(row);
    console.log(`  ${this.line(row)}`);
  }

  ratio(row: ResultRow): string {
    if (!row.floor) return '';
    if (row.latency && row.floor.p50) return `${fmt(row.latency.p50 / row.floor.p50, 1)}× floor p50`;
    if (row.throughput && row.floor.throughput) return `${fmt(row.floor.throughput / row.throughput, 1)}× below floor rate`;
    return '';
  }

  line(row: ResultRow): string {
    const parts = [row.benchmark + ':'];
    if (row.latency) parts.push(`p50 ${fmt(row.latency.p50)} ms, p90 ${fmt(row.latency.p90)}, p99 ${fmt(row.latency.p99)} (n=${row.latency.n})`);
    if (row.throughput !== undefined) parts.push(`${fmt(row.throughput, 0)}/s`);
    if (row.value) parts.push(`${typeof row.value.figure === 'number' ? fmt(row.value.figure, 2) : row.value.figure} ${row.value.unit}`);
    if (row.floor) parts.push(`| floor ${row.floor.name} ${row.floor.p50 !== undefined ? `p50 ${fmt(row.floor.p50, 2)} ms` : ''}${row.floor.throughput ? `${fmt(row.floor.throughput, 0)}/s` : ''} → ${this.ratio(row)}`);
    parts.push(`| target ${row.target} ${row.meets === null ? '(see note)' : row.meets ? 'MET' : 'MISSED'}`);
    if (row.note) parts.push(`| ${row.note}`);
    return parts.join(' ');
  }

  /** Rows and floors a group measured in its own process (already printed there). */
  merge(part: { rows: ResultRow[]; floors: Results['floors'] }): void {
    this.rows.push(...part.rows);
    Object.assign(this.floors, part.floors);
  }

  /** The closing note: every figure against its target. */
  closing(): void {
    console.log('\n=== Figures against targets' + (this.quick ? ' (--quick: short runs, indicative only)' : ''));
    for (const row of this.rows) console.log(`- ${this.line(row)}`);
    const missed = this.rows.filter((r) => r.meets === false).length;
    console.log(`${this.rows.length} rows, ${this.rows.filter((r) => r.meets === true).length} targets met, ${missed} missed.`);
  }

  write(file = path.resolve(__dirname, '../../bench-results.json')): void {
    writeFileSync(file, JSON.stringify({ startedAt: this.startedAt, quick: this.quick, node: process.version, floors: this.floors, rows: this.rows }, null, 2));
    console.log(`results written to ${path.relative(process.cwd(), file)}`);
  }
}
