import type { Ctx } from '../../common/ctx';
import { access } from '../../common/access';
import { NotFoundError } from '../../common/errors';
import { TrustLevel } from '../../common/trust';
import { MockModelProvider } from './mock-model-provider';
import type { ModelProvider } from './model-provider';
import { MODEL_ROLES, type ModelRole, type ModelRouter } from './model-router';
import type { ProviderCallLog } from './provider-call-log';

/** Health of a provider: the probe's answer, weighed with the recent calls. */
export enum ProviderHealth {
  /** The probe answered and most recent calls succeeded. */
  UP = 'UP',
  /** The probe answered but at least half of the recent calls failed. */
  DEGRADED = 'DEGRADED',
  /** The probe failed: unreachable, timed out or rejected (e.g. a wrong API key). */
  DOWN = 'DOWN',
}

/** Where a role's calls go: the primary route first (`position` 0), then its fallbacks in order. */
export interface RoleRoute {
  role: ModelRole;
  provider: string;
  model: string;
  position: number;
}

/** One provider with its health, recent latency and errors, and the roles it serves. */
export interface ProviderStatus {
  name: string;
  /** `openai-compatible` or `mock`. */
  kind: string;
  /** Base URL without credentials; null for the mock. */
  baseUrl: string | null;
  health: ProviderHealth;
  /** When the probe ran. */
  checkedAt: Date;
  /** How long the probe took. */
  probeMs: number;
  /** Why the probe failed. */
  probeError: string | null;
  /** Calls in the window (the last `window` calls across the deployment). */
  recentCalls: number;
  /** Share of failed calls in the window, 0..1; null without calls. */
  errorRate: number | null;
  /** Mean and 95th percentile duration of the successful calls in the window. */
  avgLatencyMs: number | null;
  p95LatencyMs: number | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  /** Every route that goes to this provider (primary and fallback). */
  routes: RoleRoute[];
}

/** The outcome of a test call: a tiny real completion through the provider. */
export interface ProviderTestResult {
  provider: string;
  model: string;
  ok: boolean;
  latencyMs: number;
  /** What the model answered (trimmed to 200 characters). */
  reply: string | null;
  error: string | null;
}

export interface ProviderHealthOptions {
  /** How long a probe result is reused (the overview polls). @default 15000 */
  probeCacheMs?: number;
  /** How long a probe may take before the provider counts as down. @default 5000 */
  probeTimeoutMs?: number;
  /** How many recent calls the statistics cover. @default 50 */
  window?: number;
  /** How long a test call may take. @default 30000 */
  testTimeoutMs?: number;
  /** @default Date.now */
  now?: () => number;
}

interface Probe {
  at: number;
  ms: number;
  error: string | null;
}

/**
 * The providers & models page (ADMIN and above): every provider of the router with a cheap probe
 * (`ping`, i.e. `GET /models`, cached briefly), statistics of its recent calls from the shared call log,
 * and the routes of each agent role. `test` sends one tiny real completion.
 */
export class ProviderHealthService {
  private readonly options: Required<ProviderHealthOptions>;
  private readonly probes = new Map<string, Promise<Probe>>();

  constructor(
    private readonly router: ModelRouter,
    private readonly log: ProviderCallLog,
    options: ProviderHealthOptions = {},
  ) {
    this.options = {
      probeCacheMs: options.probeCacheMs ?? 15_000,
      probeTimeoutMs: options.probeTimeoutMs ?? 5000,
      window: options.window ?? 50,
      testTimeoutMs: options.testTimeoutMs ?? 30_000,
      now: options.now ?? Date.now,
    };
  }

  /** True when no provider is configured and the built-in mock answers (the console shows how to set one). */
  get usingMock(): boolean {
    return this.router.usingMock;
  }

  /** Every role's routes, primary first. */
  roles(ctx: Ctx): RoleRoute[] {
    access.requireTrust(ctx, TrustLevel.ADMIN, 'model providers');
    return MODEL_ROLES.flatMap((role) => this.router.routes(role).map((r, position) => ({ role, provider: r.provider.name, model: r.model, position })));
  }

  /** Every provider with its health; `fresh` skips the probe cache. */
  async list(ctx: Ctx, fresh = false): Promise<ProviderStatus[]> {
    const routes = this.roles(ctx);
    return Promise.all(this.router.providers().map((p) => this.status(p, routes.filter((r) => r.provider === p.name), fresh)));
  }

  /** One tiny real completion through the provider, with its first route's model (or the primary one). */
  async test(ctx: Ctx, name: string): Promise<ProviderTestResult> {
    const routes = this.roles(ctx);
    const provider = this.router.findProvider(name);
    if (!provider) throw new NotFoundError('Model provider', name);
    const model = routes.find((r) => r.provider === name)?.model ?? this.router.primary('main').model;
    const started = this.options.now();
    const signal = AbortSignal.timeout(this.options.testTimeoutMs);
    try {
      const result = await provider.chat({ model, messages: [{ role: 'user', content: 'Reply with the single word OK.' }], maxTokens: 16, temperature: 0 }, { signal });
      const latencyMs = this.options.now() - started;
      await this.log.record(name, { at: this.options.now(), ms: latencyMs, ok: true });
      this.probes.delete(name);
      return { provider: name, model, ok: true, latencyMs, reply: result.text.trim().slice(0, 200), error: null };
    } catch (err) {
      const latencyMs = this.options.now() - started;
      const error = (err as Error).message ?? String(err);
      await this.log.record(name, { at: this.options.now(), ms: latencyMs, ok: false, error: error.slice(0, 500) });
      this.probes.delete(name);
      return { provider: name, model, ok: false, latencyMs, reply: null, error };
    }
  }

  private async status(provider: ModelProvider, routes: RoleRoute[], fresh: boolean): Promise<ProviderStatus> {
    const [probe, calls] = await Promise.all([this.probe(provider, fresh), this.log.recent(provider.name, this.options.window)]);
    const failed = calls.filter((c) => !c.ok);
    const okMs = calls.filter((c) => c.ok).map((c) => c.ms).sort((a, b) => a - b);
    const errorRate = calls.length ? failed.length / calls.length : null;
    const health = probe.error ? ProviderHealth.DOWN : errorRate !== null && calls.length >= 2 && errorRate >= 0.5 ? ProviderHealth.DEGRADED : ProviderHealth.UP;
    return {
      name: provider.name,
      kind: provider instanceof MockModelProvider ? 'mock' : 'openai-compatible',
      baseUrl: 'baseUrl' in provider && typeof provider.baseUrl === 'string' ? provider.baseUrl : null,
      health,
      checkedAt: new Date(probe.at),
      probeMs: probe.ms,
      probeError: probe.error,
      recentCalls: calls.length,
      errorRate,
      avgLatencyMs: okMs.length ? Math.round(okMs.reduce((s, v) => s + v, 0) / okMs.length) : null,
      p95LatencyMs: okMs.length ? okMs[Math.min(okMs.length - 1, Math.ceil(okMs.length * 0.95) - 1)]! : null,
      lastError: failed[0]?.error ?? null,
      lastErrorAt: failed[0] ? new Date(failed[0].at) : null,
      routes,
    };
  }

  /** The provider's ping, shared by concurrent callers and reused for `probeCacheMs`. */
  private probe(provider: ModelProvider, fresh: boolean): Promise<Probe> {
    const cached = this.probes.get(provider.name);
    if (cached && !fresh) return cached.then((p) => (this.options.now() - p.at < this.options.probeCacheMs ? p : this.runProbe(provider)));
    return this.runProbe(provider);
  }

  private runProbe(provider: ModelProvider): Promise<Probe> {
    const started = this.options.now();
    const run = provider
      .ping(AbortSignal.timeout(this.options.probeTimeoutMs))
      .then(
        () => null,
        (err: unknown) => ((err as Error).name === 'TimeoutError' ? `no answer within ${this.options.probeTimeoutMs} ms` : ((err as Error).message ?? String(err))),
      )
      .then((error) => ({ at: this.options.now(), ms: this.options.now() - started, error }));
    this.probes.set(provider.name, run);
    return run;
  }
}
