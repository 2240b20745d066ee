import { Worker } from 'node:worker_threads';
import type { ExtractionRequest, ExtractionResult } from './extraction.types';
import { startSourceWorker } from '../../../common/source-worker';

// === Extraction on a thread of its own, so a 500-page PDF never blocks the event loop, and a file that
// explodes in memory (a zip bomb whose sizes lie, a pathological PDF) ends that thread only. The thread
// stays for the next document (loading pdf.js takes a while) and ends after a minute without work; a thread
// that ran out of memory or time is stopped and the next document gets a new one.

export interface ExtractionRunOptions {
  /** Heap of the thread, MB; over it the thread is stopped and the document fails. @default 768 */
  maxMemoryMb?: number;
  /** Longest extraction. @default 300000 */
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
}

const IDLE_MS = 60_000;

/** The extraction thread (compiled JS, or the TypeScript source under jest and bench). */
function startThread(maxMemoryMb: number): Worker {
  return startSourceWorker(__dirname, 'extraction-thread', { resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb, maxYoungGenerationSizeMb: 64 } });
}

interface Pending {
  resolve(result: ExtractionResult): void;
  reject(err: Error): void;
  onProgress?: (done: number, total: number) => void;
}

interface Message {
  id: number;
  type: 'progress' | 'result' | 'error';
  done?: number;
  total?: number;
  result?: ExtractionResult;
  message?: string;
}

class ExtractionThread {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();
  private idle: NodeJS.Timeout | null = null;

  constructor(
    readonly maxMemoryMb: number,
    private readonly onGone: (thread: ExtractionThread) => void,
  ) {
    this.worker = startThread(maxMemoryMb);
    this.worker.unref();
    this.worker.on('message', (msg: Message) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      if (msg.type === 'progress') return p.onProgress?.(msg.done!, msg.total!);
      this.pending.delete(msg.id);
      if (msg.type === 'result') p.resolve(msg.result!);
      else p.reject(new Error(`extraction failed: ${msg.message}`));
      this.armIdle();
    });
    this.worker.on('error', (err: Error & { code?: string }) => {
      const oom = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.end((p) => (oom ? p.resolve({ ok: false, reason: `the document needs more than ${this.maxMemoryMb} MB of memory to read (a zip bomb or a pathological file?)` }) : p.reject(err)));
    });
    this.worker.on('exit', (code) => this.end((p) => p.reject(new Error(`extraction thread exited (${code})`))));
  }

  run(id: number, request: ExtractionRequest, p: Pending): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    this.pending.set(id, p);
    this.worker.postMessage({ id, request });
  }

  /** Gives up one extraction (timeout, abort): the thread may be stuck in it, so it is stopped. */
  abandon(id: number, outcome: (p: Pending) => void): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    outcome(p);
    this.end((other) => other.reject(new Error('extraction thread restarted')));
  }

  private armIdle(): void {
    if (this.pending.size || this.idle) return;
    this.idle = setTimeout(() => this.end(() => undefined), IDLE_MS);
    this.idle.unref();
  }

  private ended = false;

  private end(outcome: (p: Pending) => void): void {
    if (this.ended) return;
    this.ended = true;
    if (this.idle) clearTimeout(this.idle);
    this.onGone(this);
    for (const p of this.pending.values()) outcome(p);
    this.pending.clear();
    void this.worker.terminate();
  }
}

let current: ExtractionThread | null = null;
let nextId = 1;

function thread(maxMemoryMb: number): ExtractionThread {
  if (!current || current.maxMemoryMb !== maxMemoryMb) {
    current = new ExtractionThread(maxMemoryMb, (gone) => {
      if (current === gone) current = null;
    });
  }
  return current;
}

/** Extracts a stored file on the extraction thread; resolves `{ ok: false, reason }` for files that cannot be read. */
export function runExtraction(request: ExtractionRequest, options: ExtractionRunOptions = {}): Promise<ExtractionResult> {
  const maxMemoryMb = options.maxMemoryMb ?? 768;
  const timeoutMs = options.timeoutMs ?? 300_000;
  const id = nextId++;
  const t = thread(maxMemoryMb);
  return new Promise<ExtractionResult>((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };
    const timer = setTimeout(() => t.abandon(id, (p) => p.resolve({ ok: false, reason: `reading the document took longer than ${Math.round(timeoutMs / 1000)} s` })), timeoutMs);
    timer.unref();
    const onAbort = () => t.abandon(id, (p) => p.reject(new Error('extraction aborted')));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    t.run(id, request, {
      resolve: (r) => (done(), resolve(r)),
      reject: (e) => (done(), reject(e)),
      onProgress: options.onProgress,
    });
  });
}
