/**
 * `npm run bench [-- --quick] [-- --only=chat,memory] [-- --cpu-prof[=dir]]`: starts the real server per
 * benchmark group, measures floors in the same run, prints every figure with its ratio to the floor and
 * its target, and writes bench-results.json. Figures are printed, never asserted. Each group runs in a
 * process of its own (`--group=<name>`), so no group pays for the heap, threads or timers an earlier one
 * left behind.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chatBench } from './chat.bench';
import { memoryBench, smallVocabularyBench } from './memory.bench';
import { documentsBench } from './documents.bench';
import { telegramBench } from './telegram.bench';
import { subscribersBench } from './subscribers.bench';
import { startupBench } from './startup.bench';
import { contentionBench } from './contention.bench';
import { mcpBench } from './mcp.bench';
import type { BenchContext } from './support/context';
import { Results } from './support/results';

const SUITES: Record<string, (b: BenchContext) => Promise<void>> = {
  chat: chatBench,
  memory: memoryBench,
  'memory-small': smallVocabularyBench,
  documents: documentsBench,
  contention: contentionBench,
  telegram: telegramBench,
  subscribers: subscribersBench,
  startup: startupBench,
  mcp: mcpBench,
};

async function main(argv: string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const only = argv.find((a) => a.startsWith('--only='))?.slice(7).split(',');
  const prof = argv.find((a) => a.startsWith('--cpu-prof'));
  const cpuProfDir = prof ? path.resolve(prof.includes('=') ? prof.split('=')[1]! : 'bench-profiles') : null;
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true });
  const group = argv.find((a) => a.startsWith('--group='))?.slice(8);
  if (group) return runGroup(group, argv, { quick, cpuProfDir });
  const results = new Results(quick);
  const started = performance.now();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'muninn-bench-groups-'));
  let failed = 0;
  try {
    for (const name of Object.keys(SUITES)) {
      if (only && !only.includes(name)) continue;
      console.log(`\n## ${name}`);
      const t0 = performance.now();
      const out = path.join(scratch, `${name}.json`);
      const code = await runChild([...argv.filter((a) => !a.startsWith('--only=')), `--group=${name}`, `--out=${out}`]);
      try {
        results.merge(JSON.parse(readFileSync(out, 'utf8')));
      } catch {
        console.error(`  ${name} FAILED: its process ended (${code}) without results`);
        failed++;
        continue;
      }
      if (code !== 0) failed++;
      console.log(`  (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  results.closing();
  results.write();
  console.log(`bench finished in ${((performance.now() - started) / 1000).toFixed(1)} s${failed ? `, ${failed} group(s) failed` : ''}`);
  return failed ? 1 : 0;
}

/** One group in this process: its rows and floors go to `--out` for the parent. */
async function runGroup(name: string, argv: string[], options: { quick: boolean; cpuProfDir: string | null }): Promise<number> {
  const suite = SUITES[name];
  if (!suite) throw new Error(`no bench group "${name}" (groups: ${Object.keys(SUITES).join(', ')})`);
  const results = new Results(options.quick);
  let code = 0;
  try {
    await suite({ results, ...options });
  } catch (err) {
    code = 1;
    console.error(`  ${name} FAILED: ${(err as Error).stack}`);
  }
  const out = argv.find((a) => a.startsWith('--out='))?.slice(6);
  if (out) writeFileSync(out, JSON.stringify({ rows: results.rows, floors: results.floors }));
  return code;
}

/** This script again, with the same Node options (the TypeScript register), in a process of its own. */
function runChild(args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, process.argv[1]!, ...args], { stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
