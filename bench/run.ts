/**
 * `npm run bench [-- --quick] [-- --only=chat,memory] [-- --cpu-prof[=dir]]`: starts the real server per
 * benchmark group, measures floors in the same run, prints every figure with its ratio to the floor and
 * its target, and writes bench-results.json. Figures are printed, never asserted.
 */
import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
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
  const results = new Results(quick);
  const started = performance.now();
  let failed = 0;
  for (const [name, suite] of Object.entries(SUITES)) {
    if (only && !only.includes(name)) continue;
    console.log(`\n## ${name}`);
    const t0 = performance.now();
    try {
      await suite({ results, quick, cpuProfDir });
    } catch (err) {
      failed++;
      console.error(`  ${name} FAILED: ${(err as Error).stack}`);
    }
    console.log(`  (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  results.closing();
  results.write();
  console.log(`bench finished in ${((performance.now() - started) / 1000).toFixed(1)} s${failed ? `, ${failed} group(s) failed` : ''}`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
