import os from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../../common/logger';
import type { ResolvedRankingOptions } from './hybrid-ranking';
import type { MemoryStoreHit } from './memory-store';
import type { SearchWorkerHit, SearchWorkerInit, SearchWorkerReply, SearchWorkerRequest } from './memory-search-worker';
import type { IndexDifferences } from './sql-index-differences';
import type { SearchRequest } from './sql-memory-search';
import type { VectorWrite } from './sqlite-vector-tables';
import { startSourceWorker } from '../../common/source-worker';

// === The memory search threads of one SqlMemoryStore on a SQLite file
// A search at 100k memories is tens of milliseconds of SQLite and JS; on the event loop it would stall every
// other request for that long. The pool runs searches on 1–2 worker threads (memory-search-worker.ts), each
// with its own read-only connection. Threads start with the first search (or `warm` at start-up), never keep
// the process alive, and are stopped by `dispose`.

/** Threads of a pool: one on a machine of 2 cores (the other runs the event loop), two from 4 cores on. */
export function defaultSearchThreads(): number {
  return os.availableParallelism() >= 4 ? 2 : 1;
}

/** A search thread (compiled JS, or the TypeScript source under jest and bench). */
function startThread(init: SearchWorkerInit): Worker {
  return startSourceWorker(__dirname, 'memory-search-worker', { workerData: init });
}

/** A search thread ended or could not start; the store searches on its own connection instead. */
export class SearchThreadUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchThreadUnavailable';
  }
}

/** Threads in a row that may fail to start before the pool gives up. */
const FAILED_STARTS = 3;

class SearchThread {
  readonly worker: Worker;
  readonly pending = new Map<number, { resolve: (answer: SearchWorkerHit[] | IndexDifferences) => void; reject: (err: Error) => void }>();
  alive = true;
  /** It answered at least once (a thread that never does counts as a failed start). */
  answered = false;
  /** Called when its warm-up's first step is done, or the thread ended. */
  onWarmed: (() => void) | null = null;

  constructor(init: SearchWorkerInit, onEnd: (thread: SearchThread, err: Error) => void) {
    this.worker = startThread(init);
    this.worker.unref();
    this.worker.on('message', (reply: SearchWorkerReply) => {
      if ('warmed' in reply) {
        this.answered = true;
        return this.warmDone();
      }
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      this.answered = true;
      if ('error' in reply) waiting.reject(new Error(reply.error));
      else waiting.resolve('hits' in reply ? reply.hits : reply.differences);
    });
    const end = (err: Error) => {
      if (!this.alive) return;
      this.alive = false;
      this.warmDone();
      for (const waiting of this.pending.values()) waiting.reject(err);
      this.pending.clear();
      onEnd(this, err);
    };
    this.worker.on('error', (err) => end(new SearchThreadUnavailable(`memory search thread failed: ${err.message}`)));
    this.worker.on('exit', (code) => end(new SearchThreadUnavailable(`memory search thread exited (code ${code})`)));
  }

  private warmDone(): void {
    const done = this.onWarmed;
    this.onWarmed = null;
    done?.();
  }

  post(message: SearchWorkerRequest): void {
    this.worker.postMessage(message);
  }
}

export class MemorySearchPool {
  private readonly threads: SearchThread[] = [];
  private nextId = 1;
  private closed = false;
  /** Threads in a row that ended without answering; past FAILED_STARTS the pool gives up. */
  private failedStarts = 0;

  constructor(
    private readonly init: SearchWorkerInit,
    private readonly size: number,
    private readonly logger: Logger,
  ) {}

  /** False once the pool was stopped, or threads failed to start FAILED_STARTS times in a row. */
  get usable(): boolean {
    return !this.closed && this.failedStarts < FAILED_STARTS;
  }

  /** Threads running now. */
  get running(): number {
    return this.threads.length;
  }

  /** Runs the search on the least busy thread (starting one when fewer than `size` run). */
  async search(request: SearchRequest, dims: number | null, generation: number): Promise<MemoryStoreHit[]> {
    const hits = (await this.ask((id) => ({ kind: 'search', id, request, dims, generation }))) as SearchWorkerHit[];
    return hits.map((h) => ({ id: h.id, owner: h.owner, type: h.type, content: h.content, importance: h.importance, updatedAt: new Date(h.updatedAt), score: h.score, keywordScore: h.keywordScore, vectorScore: h.vectorScore }));
  }

  /** The memories table against the index, compared on a search thread between its searches (sql-index-differences.ts). */
  async differences(): Promise<IndexDifferences> {
    return (await this.ask((id) => ({ kind: 'differences', id }))) as IndexDifferences;
  }

  private ask(message: (id: number) => SearchWorkerRequest): Promise<SearchWorkerHit[] | IndexDifferences> {
    if (!this.usable) return Promise.reject(new SearchThreadUnavailable('memory search threads are stopped'));
    const thread = this.pick();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject });
      thread.post(message(id));
    });
  }

  /**
   * Starts a thread and has it load every owner's vector codes and search once for practice, so the first
   * search after start-up finds them loaded and the thread warm (off the event loop). Resolves once the
   * first owner is loaded and practised (the other owners load after), or the thread could not do it;
   * never rejects.
   */
  warm(dims: number, generation: number, ranking: ResolvedRankingOptions): Promise<void> {
    if (!this.usable) return Promise.resolve();
    const thread = this.pick();
    return new Promise<void>((resolve) => {
      const before = thread.onWarmed;
      thread.onWarmed = () => (before?.(), resolve());
      thread.post({ kind: 'warm', dims, generation, ranking });
    });
  }

  /** Committed vector writes of this process, for the codes the threads have loaded. */
  apply(set: readonly VectorWrite[], removed: readonly number[]): void {
    if (!set.length && !removed.length) return;
    for (const thread of this.threads) thread.post({ kind: 'apply', set: [...set], removed: [...removed] });
  }

  /** Stops the threads (searches still running fail with SearchThreadUnavailable). */
  async dispose(): Promise<void> {
    this.closed = true;
    const threads = this.threads.splice(0);
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private pick(): SearchThread {
    const idle = this.threads.find((t) => t.pending.size === 0);
    if (idle) return idle;
    if (this.threads.length < this.size) {
      const thread = new SearchThread(this.init, (ended, err) => {
        const i = this.threads.indexOf(ended);
        if (i >= 0) this.threads.splice(i, 1);
        if (this.closed) return;
        this.failedStarts = ended.answered ? 0 : this.failedStarts + 1;
        if (this.usable) this.logger.warn({ err: err.message }, 'memory search thread ended — the next search starts another');
        else this.logger.error({ err: err.message }, 'memory search threads fail to start — memory search runs on the main thread');
      });
      this.threads.push(thread);
      return thread;
    }
    return this.threads.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
  }
}
