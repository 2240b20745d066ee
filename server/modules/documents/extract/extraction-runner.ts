import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ExtractionRequest, ExtractionResult } from './extraction.types';

// === Runs one extraction on a thread of its own, so a 500-page PDF never blocks the event loop, and a
// file that explodes in memory (a zip bomb whose sizes lie, a pathological PDF) ends that thread only.

export interface ExtractionRunOptions {
  /** Heap of the thread, MB; over it the thread is stopped and the document fails. @default 768 */
  maxMemoryMb?: number;
  /** Longest extraction. @default 300000 */
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

/** The thread's entry: the compiled JS next to this file, or the TypeScript source compiled by swc (jest, bench). */
function startThread(request: ExtractionRequest, maxMemoryMb: number): Worker {
  const compiled = path.extname(__filename) === '.js';
  const entry = path.join(__dirname, `extraction-thread${compiled ? '.js' : '.ts'}`);
  const resourceLimits = { maxOldGenerationSizeMb: maxMemoryMb, maxYoungGenerationSizeMb: 64 };
  if (compiled) return new Worker(entry, { workerData: request, resourceLimits });
  const root = path.resolve(__dirname, '../../../..');
  const bootstrap = [
    `if (!require.extensions['.ts']) {`,
    `  const fromRoot = require('node:module').createRequire(${JSON.stringify(path.join(root, 'package.json'))});`,
    `  const { transformSync } = fromRoot('@swc/core');`,
    `  const options = fromRoot('./swc.options.js');`,
    `  const fs = require('node:fs');`,
    `  require.extensions['.ts'] = (module, filename) => module._compile(transformSync(fs.readFileSync(filename, 'utf8'), { ...options, filename }).code, filename);`,
    `}`,
    `require(${JSON.stringify(entry)});`,
  ].join('\n');
  return new Worker(bootstrap, { eval: true, workerData: request, resourceLimits });
}

/** Extracts a stored file on its own thread; resolves `{ ok: false, reason }` for files that cannot be read. */
export function runExtraction(request: ExtractionRequest, options: ExtractionRunOptions = {}): Promise<ExtractionResult> {
  const maxMemoryMb = options.maxMemoryMb ?? 768;
  const timeoutMs = options.timeoutMs ?? 300_000;
  return new Promise<ExtractionResult>((resolve, reject) => {
    let settled = false;
    const worker = startThread(request, maxMemoryMb);
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      fn();
      void worker.terminate();
    };
    const timer = setTimeout(() => finish(() => resolve({ ok: false, reason: `reading the document took longer than ${Math.round(timeoutMs / 1000)} s` })), timeoutMs);
    timer.unref();
    const onAbort = () => finish(() => reject(new Error('extraction aborted')));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (msg: { type: string; done?: number; total?: number; result?: ExtractionResult; message?: string }) => {
      if (msg.type === 'progress') options.onProgress?.(msg.done!, msg.total!);
      else if (msg.type === 'result') finish(() => resolve(msg.result!));
      else if (msg.type === 'error') finish(() => reject(new Error(`extraction failed: ${msg.message}`)));
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY') finish(() => resolve({ ok: false, reason: `the document needs more than ${maxMemoryMb} MB of memory to read (a zip bomb or a pathological file?)` }));
      else finish(() => reject(err));
    });
    worker.on('exit', (code) => finish(() => reject(new Error(`extraction thread exited (${code})`))));
  });
}
