/**
 * Model calls at their ports: the real ModelCallService and ModelCallExecutor over mock providers, with
 * the model-calls queue, the interactive marks and the session events in process.
 */
import pino from 'pino';
import { Ctx } from '../../../server/common/ctx';
import { ModelCallExecutor } from '../../../server/modules/agent';
import { ContextLengthError, MockModelProvider, ModelCallService, ModelRouter, MODEL_ROLES, type ModelCallInput, type ModelRole, type ModelRoute } from '../../../server/modules/models';
import { InMemoryInteractiveMarks, InMemorySessionEvents, InProcessModelCallJobs } from '../../support/ports';

function setup(maxRetries = 1) {
  const primary = new MockModelProvider({ name: 'primary', model: 'p-1' });
  const backup = new MockModelProvider({ name: 'backup', model: 'b-1' });
  const routes: ModelRoute[] = [
    { provider: primary, model: 'p-1' },
    { provider: backup, model: 'b-1' },
  ];
  const table = Object.fromEntries(MODEL_ROLES.map((role) => [role, routes])) as Record<ModelRole, ModelRoute[]>;
  const router = new ModelRouter([primary, backup], table, false);
  const events = new InMemorySessionEvents();
  const jobs = new InProcessModelCallJobs(maxRetries);
  const marks = new InMemoryInteractiveMarks();
  const fallbacks: string[] = [];
  const service = new ModelCallService(router, { jobs, executor: new ModelCallExecutor(events, 0), marks }, { backgroundGraceMs: 60_000, onFallback: (from) => fallbacks.push(from) });
  jobs.service = service;
  return { primary, backup, service, jobs, events, marks, fallbacks };
}

const input = (text: string, extra: Partial<ModelCallInput> = {}): ModelCallInput => ({ role: 'main', priority: 'interactive', messages: [{ role: 'user', content: text }], ...extra });
const ctx = Ctx.system(pino({ level: 'silent' }), 'test');

describe('ModelCallService through the in-process queue', () => {
  it('answers from the first route and streams the text as ReplyDelta events of the turn', async () => {
    const s = setup();
    const result = await s.service.call(ctx, input('hello', { stream: { sessionId: 's1', turnId: 't1' } }));
    expect(result).toMatchObject({ provider: 'primary', text: 'Mock reply: hello' });
    expect(s.jobs.attempts).toEqual([{ provider: 'primary', model: 'p-1', outcome: 'ok' }]);
    const deltas = s.events.of('s1', 'ReplyDelta');
    expect(deltas.every((d) => d.turnId === 't1')).toBe(true);
    expect(deltas.map((d) => d.text).join('')).toBe(result.text);
    expect(s.backup.requests).toHaveLength(0);
  });

  it('retries a server error as the queue would, then falls back to the next route', async () => {
    const s = setup(1);
    s.primary.enqueue({ error: 'server' }, { error: 'server' });
    const result = await s.service.call(ctx, input('are you there?'));
    expect(result.provider).toBe('backup');
    expect(s.jobs.attempts.map((a) => `${a.provider}:${a.outcome}`)).toEqual(['primary:retry', 'primary:retry', 'backup:ok']);
    expect(s.fallbacks).toEqual(['primary/p-1']);
  });

  it('does not fall back when the prompt does not fit: the caller gets the context-length error', async () => {
    const s = setup(0);
    s.primary.enqueue({ error: 'context-length' });
    await expect(s.service.call(ctx, input('a very long story'))).rejects.toBeInstanceOf(ContextLengthError);
    expect(s.backup.requests).toHaveLength(0);
    expect(s.fallbacks).toEqual([]);
  });

  it('stops before calling when the turn was stopped', async () => {
    const s = setup();
    const stopped = new AbortController();
    stopped.abort();
    await expect(s.service.call(ctx, input('too late'), stopped.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(s.jobs.attempts).toEqual([]);
  });

  it('holds background calls for the grace period after an interactive call of the same provider', async () => {
    const s = setup();
    const job = (priority: ModelCallInput['priority'], provider = 'primary') => ({ input: input('x', { priority, role: 'summarizer' }), provider, model: 'p-1' });
    expect(await s.service.waitUntil(job('summarizer'))).toBeNull();
    await s.service.call(ctx, input('interactive first'));
    const until = await s.service.waitUntil(job('summarizer'));
    expect(until).toBeGreaterThanOrEqual((await s.marks.last('primary')) + 60_000);
    expect(await s.service.waitUntil(job('interactive'))).toBeNull();
    expect(await s.service.waitUntil(job('summarizer', 'backup'))).toBeNull();
  });
});
