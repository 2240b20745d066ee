import { ConfigError } from '../../common/errors';
import type { Logger } from '../../common/logger';
import type { SecretRedactor } from '../../common/secret-redactor';
import type { AppConfig, RouteConfig } from '../../config';
import { MockModelProvider } from './mock-model-provider';
import { classifyModelError, isAbortError } from './model.errors';
import type { ChatOptions, ChatRequest, ChatResult, EmbedOptions, ModelProvider } from './model-provider';
import { OpenAICompatibleModelProvider } from './openai-compatible/openai-compatible-model-provider';
import { parseModelList } from './openai-compatible/wire';
import { MODEL_PRESETS, resolveProviderConfig, type ResolvedProviderConfig } from './presets';

// === Routing agent roles to providers (DESIGN §2)

export const MODEL_ROLES = ['main', 'summarizer', 'heartbeat', 'embeddings'] as const satisfies readonly string[];
/** An agent role with its own provider + model. */
export type ModelRole = (typeof MODEL_ROLES)[number];

/** One place a role's calls can go. */
export interface ModelRoute {
  provider: ModelProvider;
  model: string;
}

/** The parts of `config.ai` the router reads. */
export type ModelRouterConfig = Pick<AppConfig['ai'], 'providers' | 'roles'>;

/** Name of the provider used when Ollama is found by the probe. */
export const LOCAL_PROVIDER_NAME = 'local';
/** Name and model of the fallback mock provider. */
export const MOCK_PROVIDER_NAME = 'mock';
export const MOCK_MODEL = 'mock-1';

export interface ModelRouterOptions {
  /** Where API keys are read. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Logs the provider choice (warn when falling back to the mock) and per-call debug lines. @default none */
  logger?: Logger;
  /**
   * When no provider is configured, look for a local Ollama first. `false` skips the probe (straight to the
   * mock); an object points it elsewhere (tests use an unused port).
   * @default { baseUrl: 'http://127.0.0.1:11434/v1', timeoutMs: 1000 }
   */
  probeOllama?: boolean | { baseUrl?: string; timeoutMs?: number };
  /** API keys are registered here so they are redacted from every log line. @default none */
  redactor?: SecretRedactor;
  /** Log prompts and completions (`log.sensitive`). @default false */
  sensitiveLogs?: boolean;
  /** Builds a provider from its resolved config; tests can substitute fakes. @default the built-in ones */
  createProvider?: (config: ResolvedProviderConfig) => ModelProvider;
  /**
   * Where calls over budget go with `budgets.on_exceed: downgrade` (`budgets.downgrade_to`): a role's
   * routes, or a route of its own. @default none
   */
  downgradeTo?: ModelRole | RouteConfig | null;
}

/** A chat result together with the route that produced it. */
export type RoutedChatResult = ChatResult & { route: { provider: string; model: string; fallbackIndex: number } };

const DEFAULT_OLLAMA = { baseUrl: MODEL_PRESETS.ollama.baseUrl, timeoutMs: 1000 };

/**
 * Asks `GET <baseUrl>/models` and returns the first model id, or null when nothing answers in time or the
 * list is empty. Never throws.
 */
export async function probeOllama(baseUrl: string = DEFAULT_OLLAMA.baseUrl, timeoutMs = DEFAULT_OLLAMA.timeoutMs): Promise<string | null> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const res = await fetch(`${baseUrl.replace(/\/+$/, '')}/models`, { signal: controller.signal });
    if (!res.ok) return null;
    return parseModelList(await res.json())[0] ?? null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Maps each agent role to an ordered list of routes (the configured one, then its fallbacks) and owns the
 * provider instances (one per `ai.providers` entry, shared by every role that uses it).
 */
export class ModelRouter {
  private readonly byName: ReadonlyMap<string, ModelProvider>;

  constructor(
    providers: readonly ModelProvider[],
    private readonly table: Readonly<Record<ModelRole, readonly ModelRoute[]>>,
    /** True when nothing was configured and the mock provider answers every role. */
    readonly usingMock: boolean,
    private readonly logger: Logger | null = null,
    private readonly downgrade: readonly ModelRoute[] | null = null,
  ) {
    this.byName = new Map(providers.map((p) => [p.name, p]));
    for (const role of MODEL_ROLES) {
      if (!table[role]?.length) throw new ConfigError(`No model route for role "${role}".`);
    }
  }

  /**
   * Builds the router from `config.ai`:
   * - a role with a route uses that provider + model, then its fallbacks in order;
   * - a role set to null uses the first provider with its default model;
   * - with no provider at all: a local Ollama when `probeOllama` finds one (as provider `local`), else the
   *   mock provider, logged once at warn.
   * Throws `ConfigError` for a hosted preset without its API key env, or a route without any model.
   */
  static async fromConfig(ai: ModelRouterConfig, options: ModelRouterOptions = {}): Promise<ModelRouter> {
    const env = options.env ?? process.env;
    const logger = options.logger ?? null;
    const create =
      options.createProvider ??
      ((config: ResolvedProviderConfig) => createProvider(config, { logger: logger ?? undefined, sensitiveLogs: options.sensitiveLogs }));
    const names = Object.keys(ai.providers);

    if (names.length === 0) {
      const probe = options.probeOllama === false ? null : { ...DEFAULT_OLLAMA, ...(typeof options.probeOllama === 'object' ? options.probeOllama : {}) };
      const model = probe ? await probeOllama(probe.baseUrl, probe.timeoutMs) : null;
      if (probe && model) {
        const provider = create({
          kind: 'openai-compatible',
          name: LOCAL_PROVIDER_NAME,
          preset: 'ollama',
          baseUrl: probe.baseUrl,
          apiKey: null,
          apiKeyEnv: null,
          maxTokensParam: 'max_tokens',
          model,
          contextWindow: 8192,
          maxConcurrency: 1,
          timeoutMs: 120_000,
          supportsTools: true,
          supportsVision: false,
        });
        logger?.info({ provider: LOCAL_PROVIDER_NAME, baseUrl: probe.baseUrl, model }, `no model provider configured — using the local Ollama (${model})`);
        const table = sameRouteForAll({ provider, model });
        return new ModelRouter([provider], table, false, logger, typeof options.downgradeTo === 'string' ? table[options.downgradeTo] : null);
      }
      const mock = new MockModelProvider({ name: MOCK_PROVIDER_NAME, model: MOCK_MODEL });
      logger?.warn({ provider: MOCK_PROVIDER_NAME }, 'no model provider configured — using the mock provider');
      const table = sameRouteForAll({ provider: mock, model: MOCK_MODEL });
      return new ModelRouter([mock], table, true, logger, typeof options.downgradeTo === 'string' ? table[options.downgradeTo] : null);
    }

    const resolved = new Map(names.map((name) => [name, resolveProviderConfig(name, ai.providers[name]!, env)]));
    for (const config of resolved.values()) {
      if (config.kind === 'openai-compatible') options.redactor?.add(config.apiKey);
    }
    const providers = new Map<string, ModelProvider>();
    const providerFor = (name: string, key: string): ModelProvider => {
      const config = resolved.get(name);
      if (!config) {
        throw new ConfigError(`config key "${key}": provider "${name}" is not defined. Fix: add it under ai.providers or use one of: ${names.join(', ')}.`);
      }
      let provider = providers.get(name);
      if (!provider) {
        provider = create(config);
        providers.set(name, provider);
      }
      return provider;
    };
    const modelFor = (name: string, model: string | null, key: string): string => {
      const chosen = model ?? resolved.get(name)?.model;
      if (!chosen) {
        throw new ConfigError(
          `config key "${key}.model" is not set and provider "${name}" has no default model. Fix: set ai.providers.${name}.model (or ${key}.model) to a model id, e.g. "llama3.1:8b".`,
        );
      }
      return chosen;
    };

    const table = {} as Record<ModelRole, ModelRoute[]>;
    for (const role of MODEL_ROLES) {
      const route = ai.roles[role];
      const key = `ai.roles.${role}`;
      if (!route) {
        const first = names[0]!;
        table[role] = [{ provider: providerFor(first, `ai.providers.${first}`), model: modelFor(first, null, `ai.providers.${first}`) }];
        continue;
      }
      table[role] = [
        { provider: providerFor(route.provider, `${key}.provider`), model: modelFor(route.provider, route.model, key) },
        ...route.fallbacks.map((f, i) => ({
          provider: providerFor(f.provider, `${key}.fallbacks.${i}.provider`),
          model: modelFor(f.provider, f.model, `${key}.fallbacks.${i}`),
        })),
      ];
    }
    const to = options.downgradeTo ?? null;
    const downgrade =
      to === null
        ? null
        : typeof to === 'string'
          ? table[to]
          : [
              { provider: providerFor(to.provider, 'budgets.downgrade_to.provider'), model: modelFor(to.provider, to.model, 'budgets.downgrade_to') },
              ...to.fallbacks.map((f, i) => ({
                provider: providerFor(f.provider, `budgets.downgrade_to.fallbacks.${i}.provider`),
                model: modelFor(f.provider, f.model, `budgets.downgrade_to.fallbacks.${i}`),
              })),
            ];
    const router = new ModelRouter([...providers.values()], table, false, logger, downgrade);
    logger?.info(Object.fromEntries(MODEL_ROLES.map((r) => [r, router.describe(r)])), 'model routes');
    return router;
  }

  // === Lookups

  /** The routes of a role: the configured one first, then its fallbacks. */
  routes(role: ModelRole): readonly ModelRoute[] {
    return this.table[role];
  }

  /** Where calls over budget go (`budgets.downgrade_to`), or null when none is configured. */
  downgradeRoutes(): readonly ModelRoute[] | null {
    return this.downgrade?.length ? this.downgrade : null;
  }

  /** The first route of a role. */
  primary(role: ModelRole): ModelRoute {
    return this.table[role][0]!;
  }

  /** Every distinct provider in use (the queue creates one `model-calls` queue per provider). */
  providers(): ModelProvider[] {
    return [...this.byName.values()];
  }

  /** A provider by name, or null. */
  findProvider(name: string): ModelProvider | null {
    return this.byName.get(name) ?? null;
  }

  /** Context window of the role's primary route. */
  contextWindow(role: ModelRole): number {
    return this.primary(role).provider.contextWindow;
  }

  /** `provider/model` of the role's primary route, for `/status`, e.g. `mock/mock-1` or `local/llama3`. */
  describe(role: ModelRole): string {
    const { provider, model } = this.primary(role);
    return `${provider.name}/${model}`;
  }

  // === Calls with fallback

  /**
   * Calls the role's routes in order until one succeeds. A failure moves on to the next route unless it is
   * an abort or a context-length error (those go straight back to the caller, as does the last failure).
   * Callers that retry through the queue per route can use `routes()` instead.
   */
  async chat(role: ModelRole, req: Omit<ChatRequest, 'model'>, opts: ChatOptions = {}): Promise<RoutedChatResult> {
    const routes = this.routes(role);
    for (let i = 0; ; i++) {
      const route = routes[i]!;
      let delivered = false;
      const onDelta = opts.onDelta ? (t: string) => ((delivered = true), opts.onDelta!(t)) : undefined;
      try {
        const result = await route.provider.chat({ ...req, model: route.model }, { ...opts, onDelta });
        return { ...result, route: { provider: route.provider.name, model: route.model, fallbackIndex: i } };
      } catch (err) {
        // Once text reached the caller, switching models would splice two answers together.
        const last = i === routes.length - 1 || delivered || isAbortError(err) || classifyModelError(err) === 'context-length';
        if (last) throw err;
        this.logger?.warn(
          { role, from: `${route.provider.name}/${route.model}`, to: `${routes[i + 1]!.provider.name}/${routes[i + 1]!.model}`, err: (err as Error).message },
          'model call failed — trying the fallback',
        );
      }
    }
  }

  /** Embeds through the `embeddings` role, with the same fallback rule as `chat`. */
  async embed(texts: string[], opts: Omit<EmbedOptions, 'model'> = {}): Promise<number[][]> {
    const routes = this.routes('embeddings');
    for (let i = 0; ; i++) {
      const route = routes[i]!;
      try {
        return await route.provider.embed(texts, { ...opts, model: route.model });
      } catch (err) {
        if (i === routes.length - 1 || isAbortError(err)) throw err;
        this.logger?.warn({ role: 'embeddings', from: `${route.provider.name}/${route.model}`, err: (err as Error).message }, 'embedding call failed — trying the fallback');
      }
    }
  }

  async dispose(): Promise<void> {
    await Promise.all(this.providers().map((p) => p.dispose?.()));
  }
}

function sameRouteForAll(route: ModelRoute): Record<ModelRole, ModelRoute[]> {
  return Object.fromEntries(MODEL_ROLES.map((role) => [role, [route]])) as Record<ModelRole, ModelRoute[]>;
}

/** The built-in provider for a resolved config entry. */
export function createProvider(config: ResolvedProviderConfig, options: { logger?: Logger; sensitiveLogs?: boolean } = {}): ModelProvider {
  if (config.kind === 'mock') {
    return new MockModelProvider({
      name: config.name,
      model: config.model ?? MOCK_MODEL,
      contextWindow: config.contextWindow,
      maxConcurrency: config.maxConcurrency,
      supportsTools: config.supportsTools,
      supportsVision: config.supportsVision,
    });
  }
  return new OpenAICompatibleModelProvider({
    name: config.name,
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    model: config.model,
    contextWindow: config.contextWindow,
    maxConcurrency: config.maxConcurrency,
    timeoutMs: config.timeoutMs,
    supportsTools: config.supportsTools,
    supportsVision: config.supportsVision,
    maxTokensParam: config.maxTokensParam,
    logger: options.logger?.child({ provider: config.name }),
    sensitiveLogs: options.sensitiveLogs,
  });
}
