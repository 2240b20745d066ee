import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

// `npm run bench:profile -- <file.cpuprofile> [fromSeconds] [untilSeconds]`, or from a benchmark
// (bench:turn-work --cpu-prof). Measurement only; never loaded by the product.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ROOT = path.resolve(__dirname, '../..');

/** Where a frame's code lives: `node_modules/<package>`, a project folder, or the native function's name. */
function placeOf(frame: ProfileNode['callFrame']): string | null {
  const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(frame.url);
  if (pkg) return pkg[1]!;
  if (frame.url.includes(ROOT)) return path.relative(ROOT, frame.url.replace(/^file:\/\//, '')).split('/').slice(0, 3).join('/');
  return null;
}

/**
 * Self time of a V8 CPU profile by package or project folder (native frames by their name, e.g.
 * `(garbage collector)`, `(writeBuffer)`) between `fromMs` and `untilMs` after the profile began, plus who issued the
 * socket writes (the nearest package frame above each native write).
 */
export function summarizeProfile(file: string, fromMs: number, untilMs = Infinity, top = 25): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const functions = new Map<string, number>();
  const writers = new Map<string, number>();
  let t = 0;
  let total = 0;
  let idle = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    if (t / 1000 < fromMs) continue;
    if (t / 1000 > untilMs) break;
    const node = byId.get(p.samples[i]!)!;
    const ms = p.timeDeltas[i]! / 1000;
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      idle += ms;
      continue;
    }
    total += ms;
    const key = placeOf(node.callFrame) ?? `(${name || 'native'})`;
    self.set(key, (self.get(key) ?? 0) + ms);
    const fn = `${name || '(anonymous)'} ${node.callFrame.url ? `${node.callFrame.url.replace(/^.*node_modules\//, '').replace(`file://${ROOT}/`, '')}:${node.callFrame.lineNumber + 1}` : ''}`;
    functions.set(fn, (functions.get(fn) ?? 0) + ms);
    if (/^(writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(name)) {
      let id: number | undefined = node.id;
      let by = '?';
      while (id !== undefined) {
        const place = placeOf(byId.get(id)!.callFrame);
        if (place) {
          by = place;
          break;
        }
        id = parent.get(id);
      }
      writers.set(by, (writers.get(by) ?? 0) + ms);
    }
  }
  const pct = (ms: number) => `${((100 * ms) / total).toFixed(1)} %`;
  const lines = [`busy ${total.toFixed(0)} ms, idle ${idle.toFixed(0)} ms (${((100 * total) / (total + idle)).toFixed(0)} % busy)`];
  for (const [k, v] of [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${v.toFixed(0).padStart(6)} ms ${pct(v).padStart(7)}  ${k}`);
  lines.push('by function:');
  for (const [k, v] of [...functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${v.toFixed(0).padStart(6)} ms ${pct(v).padStart(7)}  ${k}`);
  const written = [...writers.values()].reduce((a, b) => a + b, 0);
  lines.push(`socket writes ${written.toFixed(0)} ms (${pct(written)} of busy), by caller:`);
  for (const [k, v] of [...writers.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6)) lines.push(`  ${v.toFixed(0).padStart(6)} ms ${pct(v).padStart(7)}  ${k}`);
  return lines.join('\n');
}

/** The newest `.cpuprofile` in `dir`. */
export function newestProfile(dir: string): string | null {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort();
  return files.length ? path.join(dir, files[files.length - 1]!) : null;
}

if (require.main === module) {
  const [file, from, until] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npm run bench:profile -- <file.cpuprofile> [fromSeconds] [untilSeconds]');
    process.exit(2);
  }
  console.log(summarizeProfile(file, Number(from ?? 0) * 1000, until ? Number(until) * 1000 : Infinity));
}
