import path from 'node:path';
import type { AppConfig } from '../config';
import type { Ctx } from '../common/ctx';
import type { Logger } from '../common/logger';
import type { Db } from '../persistence/db';
import type { AuditService } from '../modules/audit';
import type { SlashCommandService } from '../modules/commands';
import {
  createMemoryTools,
  LanceDbMemoryStore,
  MemoryEmbedder,
  MemoryIndexer,
  MemoryRecallService,
  MemorySearchService,
  MemoryService,
  registerMemoryCommands,
  SqlMemoryStore,
  WorkspaceMemory,
  type EmbeddingSource,
  type MemoryStore,
} from '../modules/memory';
import { estimateTokens, type ModelRouter } from '../modules/models';
import type { Tool } from '../modules/tools';

export interface MemoryLayerDeps {
  config: AppConfig;
  db: Db;
  audit: AuditService;
  logger: Logger;
}

/**
 * Embeddings from the primary route of the router's `embeddings` role. Fallback routes are not used: their
 * vectors live in another space (and often another dimension); while the primary fails, search is
 * keyword-only.
 */
export function routerEmbeddings(router: ModelRouter, charge?: EmbeddingCharge): EmbeddingSource {
  const { provider, model } = router.primary('embeddings');
  return {
    model: `${provider.name}/${model}`,
    prepare: () => provider.prepare?.(),
    embed: async (texts, signal, ctx) => {
      let reported: number | null = null;
      const vectors = await provider.embed(texts, { model, signal, onUsage: (tokens) => (reported = tokens) });
      // The vectors are good either way: a failed charge is logged, it does not cost the user their search.
      if (charge && ctx) await charge(ctx, provider.name, model, texts, reported).catch((err: Error) => ctx.logger.warn({ err: err.message }, 'could not record an embeddings call'));
      return vectors;
    },
  };
}

/**
 * Records (and charges to the user's budget) an embeddings call that succeeded; `reportedTokens` is the
 * input the server reported for it (null: estimated from the texts).
 */
export type EmbeddingCharge = (ctx: Ctx, provider: string, model: string, texts: string[], reportedTokens: number | null) => Promise<void>;

/**
 * Long-term memory of one process (DESIGN §5): the search index (`memory.vector_store`), the embedder, the
 * service that keeps both in step with the memories table, search with the visibility rules, recall for
 * the agent, the workspace files, and the tools and `/memories` command. Built by the composition root;
 * `startBackground` (processes that run workers) reconciles the index and starts the workspace watcher.
 */
/** How often the index is reconciled with the memories table after the start (rows changed behind the service's back, deleted users, other processes' LanceDB writes). */
const RECONCILE_EVERY_MS = 10 * 60_000;
/** Longest a start waits for the search warm-up (a machine too busy for it reports ready without it). */
const WARM_WAIT_MS = 10_000;

export class MemoryLayer {
  private background: Promise<void> | null = null;
  /** `prepareSearch`'s warm-up, once called. */
  private prepared: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly deps: MemoryLayerDeps,
    readonly embedder: MemoryEmbedder,
    readonly store: MemoryStore,
    readonly indexer: MemoryIndexer,
    readonly service: MemoryService,
    readonly search: MemorySearchService,
    readonly recall: MemoryRecallService,
    readonly workspace: WorkspaceMemory,
  ) {}

  static create(deps: MemoryLayerDeps): MemoryLayer {
    const { config, db } = deps;
    const logger = deps.logger.child({ module: 'memory' });
    const embedder = new MemoryEmbedder(db, logger);
    const ranking = { keywordWeight: config.memory.keyword_weight, vectorWeight: config.memory.vector_weight };
    const store: MemoryStore =
      config.memory.vector_store === 'lancedb'
        ? new LanceDbMemoryStore({ dir: path.join(config.data_dir, 'lancedb'), embedder, logger, ...ranking })
        : new SqlMemoryStore(db, { embedder, logger, ...ranking });
    const indexer = new MemoryIndexer(db, store, logger);
    const service = new MemoryService(db, deps.audit, indexer);
    const search = new MemorySearchService(db, store, { maxResults: config.memory.max_results, minScore: config.memory.min_score });
    const workspace = new WorkspaceMemory(db, indexer, logger.child({ part: 'workspace' }), {
      dataDir: config.data_dir,
      chunkTokens: config.memory.chunk_tokens,
      chunkOverlap: config.memory.chunk_overlap,
      estimate: estimateTokens,
    });
    return new MemoryLayer(deps, embedder, store, indexer, service, search, new MemoryRecallService(search), workspace);
  }

  /** Vectors from the router's `embeddings` role; null makes memory search keyword-only (logged once). */
  useEmbeddings(router: ModelRouter | null, charge?: EmbeddingCharge): void {
    this.embedder.setSource(router ? routerEmbeddings(router, charge) : null);
    if (!router) this.deps.logger.info({ module: 'memory' }, 'no embedder — memory search is keyword-only');
  }

  /** `memory_search` and `memory_save`. */
  tools(): Tool[] {
    return createMemoryTools({ search: this.search, memories: this.service, db: this.deps.db });
  }

  registerCommands(commands: SlashCommandService): void {
    registerMemoryCommands(commands, { memories: this.service });
  }

  /**
   * Opens the search index now and warms it (on SQLite with vectors: its search thread starts, loads the
   * first owner's codes and searches once for practice, off the event loop), so the first search after
   * start-up is as fast as the next ones. Called as a serving process starts, before it listens; resolves
   * when the warm-up is done or after WARM_WAIT_MS, never rejects (a search that comes first waits for what
   * it needs). The process reports ready only after it: at 100k memories a search sent then waited a second.
   */
  prepareSearch(ctx: Ctx): Promise<void> {
    // The first search will embed its query: the embeddings client is loaded now, while the thread warms.
    // (A failed init is reported below.)
    void this.store.init?.(ctx).then(() => this.store.embedsQueries && this.embedder.prepare(), () => undefined);
    const warm = (this.store.warm ? this.store.warm(ctx) : (this.store.init?.(ctx) ?? Promise.resolve())).catch((err: Error) =>
      this.deps.logger.warn({ err: err.message, module: 'memory' }, 'memory search index did not open at start — the first search opens it'),
    );
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => (timer = setTimeout(resolve, WARM_WAIT_MS).unref()));
    this.prepared = Promise.race([warm, cap]).finally(() => clearTimeout(timer));
    return this.prepared;
  }

  /**
   * Reconciles the index with the memories table (vectors for what has none), then re-indexes the
   * workspace files and watches them. Runs in the background; `ready` resolves when both are done.
   */
  startBackground(ctx: Ctx): Promise<void> {
    this.background ??= (async () => {
      try {
        // After the search warm-up (which start-up waits for): the two would share the CPU.
        await (this.prepared ?? this.store.init?.(ctx));
        await this.indexer.reconcile(ctx, this.abort.signal);
      } catch (err) {
        this.deps.logger.error({ err, module: 'memory' }, 'memory index reconcile failed');
      }
      if (this.abort.signal.aborted) return;
      try {
        await this.workspace.start(ctx);
      } catch (err) {
        this.deps.logger.error({ err, module: 'memory' }, 'workspace memory failed to start');
      }
      if (this.abort.signal.aborted) return;
      this.timer = setInterval(() => {
        this.indexer.reconcile(ctx, this.abort.signal).catch((err) => this.deps.logger.warn({ err, module: 'memory' }, 'memory index reconcile failed'));
      }, RECONCILE_EVERY_MS);
      this.timer.unref();
    })();
    return this.background;
  }

  /** Resolves once `startBackground`'s work is done (immediately when it was not started). */
  get ready(): Promise<void> {
    return this.background ?? Promise.resolve();
  }

  async dispose(): Promise<void> {
    this.abort.abort();
    if (this.timer) clearInterval(this.timer);
    await this.background?.catch(() => undefined);
    await this.workspace.stop();
    await this.store.dispose?.();
  }
}
