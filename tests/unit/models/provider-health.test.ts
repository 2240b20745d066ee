import pino from 'pino';
import { Ctx } from '../../../server/common/ctx';
import { TrustLevel } from '../../../server/common/trust';
import { InMemoryProviderCallLog, MockModelProvider, ModelRouter, ProviderHealth, ProviderHealthService, loggedExecutor, MODEL_ROLES, type ModelProvider } from '../../../server/modules/models';

const logger = pino({ enabled: false });
const admin = new Ctx({ actor: { kind: 'user', userId: 'a', trust: TrustLevel.ADMIN }, logger });
const member = new Ctx({ actor: { kind: 'user', userId: 'm', trust: TrustLevel.MEMBER }, logger });

/** A provider whose ping fails with the given message (or succeeds with null). */
function provider(name: string, pingError: string | null): ModelProvider {
  const mock = new MockModelProvider({ name, model: 'm-1' });
  return Object.assign(mock, { ping: async () => (pingError ? Promise.reject(new Error(pingError)) : undefined) });
}

function router(primary: ModelProvider, fallback: ModelProvider): ModelRouter {
  const table = Object.fromEntries(MODEL_ROLES.map((r) => [r, r === 'main' ? [{ provider: primary, model: 'm-1' }, { provider: fallback, model: 'm-2' }] : [{ provider: primary, model: 'm-1' }]]));
  return new ModelRouter([primary, fallback], table as never, false);
}

describe('ProviderHealthService', () => {
  it('DOWN when the probe fails, DEGRADED when half the recent calls failed, UP otherwise; with routes and latency', async () => {
    const log = new InMemoryProviderCallLog();
    const now = 1_000_000;
    const a = provider('a', null);
    const b = provider('b', 'connection refused');
    const health = new ProviderHealthService(router(a, b), log, { now: () => now });
    await log.record('a', { at: now - 3, ms: 100, ok: true });
    await log.record('a', { at: now - 2, ms: 300, ok: true });
    let list = await health.list(admin);
    expect(list.find((p) => p.name === 'a')).toMatchObject({ health: ProviderHealth.UP, recentCalls: 2, errorRate: 0, avgLatencyMs: 200, p95LatencyMs: 300, lastError: null });
    expect(list.find((p) => p.name === 'b')).toMatchObject({ health: ProviderHealth.DOWN, probeError: 'connection refused', recentCalls: 0, errorRate: null });
    expect(list.find((p) => p.name === 'b')!.routes).toEqual([{ role: 'main', provider: 'b', model: 'm-2', position: 1 }]);

    await log.record('a', { at: now - 1, ms: 50, ok: false, error: 'HTTP 500' });
    await log.record('a', { at: now, ms: 50, ok: false, error: 'HTTP 502' });
    list = await health.list(admin);
    expect(list.find((p) => p.name === 'a')).toMatchObject({ health: ProviderHealth.DEGRADED, errorRate: 0.5, lastError: 'HTTP 502', lastErrorAt: new Date(now) });
  });

  it('reuses a probe for a while; fresh probes again', async () => {
    let pings = 0;
    const a = Object.assign(new MockModelProvider({ name: 'a' }), { ping: async () => void pings++ });
    let now = 0;
    const health = new ProviderHealthService(router(a, provider('b', null)), new InMemoryProviderCallLog(), { now: () => now, probeCacheMs: 1000 });
    await health.list(admin);
    await health.list(admin);
    expect(pings).toBe(1);
    now = 2000;
    await health.list(admin);
    expect(pings).toBe(2);
    await health.list(admin, true);
    expect(pings).toBe(3);
  });

  it('test() sends a real completion and logs it; unknown providers and members are refused', async () => {
    const log = new InMemoryProviderCallLog();
    const a = new MockModelProvider({ name: 'a' });
    const health = new ProviderHealthService(router(a, provider('b', null)), log);
    const result = await health.test(admin, 'a');
    expect(result).toMatchObject({ provider: 'a', model: 'm-1', ok: true, error: null });
    expect(result.reply).toBe('Mock reply: Reply with the single word OK.');
    expect(await log.recent('a', 5)).toHaveLength(1);
    await expect(health.test(admin, 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(health.list(member)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('loggedExecutor records outcomes but not aborted calls', async () => {
    const log = new InMemoryProviderCallLog();
    const route = { provider: new MockModelProvider({ name: 'p' }), model: 'm' };
    const ok = loggedExecutor({ execute: async () => ({ text: 'x' }) as never }, log);
    const failing = loggedExecutor({ execute: async () => Promise.reject(new Error('boom')) }, log);
    await ok.execute(route, {} as never);
    await expect(failing.execute(route, {} as never)).rejects.toThrow('boom');
    const aborted = new AbortController();
    aborted.abort();
    await expect(failing.execute(route, {} as never, aborted.signal)).rejects.toThrow('boom');
    expect((await log.recent('p', 10)).map((e) => [e.ok, e.error ?? null])).toEqual([
      [false, 'boom'],
      [true, null],
    ]);
  });
});
