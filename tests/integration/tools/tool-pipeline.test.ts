import { z } from 'zod';
import { TrustLevel } from '../../../server/common/trust';
import { defineTool, ToolRefusedError, type ToolCallOutcome } from '../../../server/modules/tools';
import { call, ToolsFixture } from './tools-fixture';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('ToolPipeline', () => {
  let f: ToolsFixture;
  const intervals: Array<{ start: number; end: number }> = [];

  beforeAll(async () => {
    f = await ToolsFixture.create({ config: { tools: { timeout_ms: 300, max_output_chars: 100, max_parallel: 2 } } });
    f.register(
      defineTool({
        name: 'echo',
        description: 'Echoes text.',
        schema: z.object({ text: z.string().max(50), times: z.number().int().min(1).default(1) }).strict(),
        minTrust: TrustLevel.MEMBER,
        run: async (_tc, a) => a.text.repeat(a.times),
      }),
      defineTool({
        name: 'napper',
        description: 'Sleeps, recording when it ran.',
        schema: z.object({ ms: z.number().int() }),
        minTrust: TrustLevel.MEMBER,
        async run(_tc, a) {
          const start = Date.now();
          await sleep(a.ms);
          intervals.push({ start, end: Date.now() });
          return { slept: a.ms };
        },
      }),
      defineTool({
        name: 'hang',
        description: 'Never finishes unless aborted.',
        schema: z.object({}),
        minTrust: TrustLevel.MEMBER,
        run: (tc) =>
          new Promise((_resolve, reject) => {
            tc.signal.addEventListener('abort', () => {
              hangAborted.push(String(tc.signal.reason));
              reject(new Error('aborted'));
            });
          }),
      }),
      defineTool({
        name: 'boom',
        description: 'Throws.',
        schema: z.object({}),
        minTrust: TrustLevel.MEMBER,
        run: async () => {
          throw new Error('disk on fire');
        },
      }),
      defineTool({
        name: 'picky',
        description: 'Refuses by policy.',
        schema: z.object({}),
        minTrust: TrustLevel.MEMBER,
        run: async () => {
          throw new ToolRefusedError('not today');
        },
      }),
      defineTool({
        name: 'admin_only',
        description: 'For admins.',
        schema: z.object({}),
        minTrust: TrustLevel.ADMIN,
        run: async () => 'admin stuff',
      }),
      defineTool({
        name: 'guest_floor',
        description: 'Declares GUEST, but GUEST never gets tools.',
        schema: z.object({}),
        minTrust: TrustLevel.GUEST,
        run: async () => 'ran',
      }),
      defineTool({
        name: 'opt_in',
        description: 'Off unless enabled in plugin settings.',
        schema: z.object({}),
        minTrust: TrustLevel.MEMBER,
        defaultEnabled: false,
        run: async () => 'opted in',
      }),
    );
  });
  afterAll(() => f.close());

  const hangAborted: string[] = [];

  it('runs a valid call and returns its output', async () => {
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('echo', { text: 'hi', times: 2 })]);
    expect(out).toMatchObject({ id: 'call-echo', name: 'echo', ok: true, status: 'ok', output: 'hihi' });
    expect(out!.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('answers an unknown tool with an error outcome', async () => {
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.OWNER), [call('nope', {})]);
    expect(out).toMatchObject({ ok: false, status: 'error' });
    expect(out!.output).toContain('Unknown tool "nope"');
  });

  it('answers invalid arguments with an invalid outcome naming the field', async () => {
    const tc = f.toolContext(TrustLevel.MEMBER);
    const [badType, badJson, extra] = await f.pipeline.runAll(tc, [
      call('echo', { text: 42 }, 'a'),
      call('echo', '{"text": ', 'b'),
      call('echo', { text: 'x', times: 0 }, 'c'),
    ]);
    expect(badType).toMatchObject({ status: 'invalid', ok: false });
    expect(badType!.output).toMatch(/text: .*expected string/);
    expect(badJson!.status).toBe('invalid');
    expect(badJson!.output).toContain('not valid JSON');
    expect(extra!.status).toBe('invalid');
    expect(extra!.output).toContain('times:');
  });

  it('refuses a tool above the sender trust, audits it as tool.refused, and does not throw', async () => {
    const before = (await f.audit('tool.refused')).length;
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.TRUSTED), [call('admin_only', {})]);
    expect(out).toMatchObject({ status: 'refused', ok: false });
    expect(out!.output).toContain('needs ADMIN trust; the sender is TRUSTED');
    const refused = await f.audit('tool.refused');
    expect(refused).toHaveLength(before + 1);
    expect(refused.at(-1)).toMatchObject({
      actorUserId: f.user(TrustLevel.TRUSTED).id,
      targetType: 'Tool',
      targetId: 'admin_only',
      details: expect.objectContaining({ tool: 'admin_only', userId: f.user(TrustLevel.TRUSTED).id, trust: 'TRUSTED' }),
    });
  });

  it('never lets GUEST or BLOCKED run tools, even one declared for GUEST', async () => {
    for (const level of [TrustLevel.GUEST, TrustLevel.BLOCKED]) {
      const [out] = await f.pipeline.runAll(f.toolContext(level), [call('guest_floor', {})]);
      expect(out!.status).toBe('refused');
      expect(await f.registry.specsFor(f.ctx(level), 'telegram')).toEqual([]);
    }
    const [member] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('guest_floor', {})]);
    expect(member!.status).toBe('ok');
  });

  it('turns a tool exception into an error outcome and a ToolRefusedError into refused', async () => {
    const [boom, picky] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('boom', {}), call('picky', {})]);
    expect(boom).toMatchObject({ status: 'error', ok: false });
    expect(boom!.output).toContain('disk on fire');
    expect(picky).toMatchObject({ status: 'refused' });
    expect(picky!.output).toBe('Refused: not today');
    const refused = await f.audit('tool.refused');
    expect(refused.at(-1)!.details).toMatchObject({ tool: 'picky', reason: 'not today' });
  });

  it('times out a slow tool and aborts its signal', async () => {
    const started = Date.now();
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('hang', {})]);
    expect(out).toMatchObject({ status: 'timeout', ok: false });
    expect(out!.output).toContain('did not finish within 300 ms');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(hangAborted.at(-1)).toContain('timed out');
  });

  it('aborts running tools when the turn is stopped', async () => {
    const controller = new AbortController();
    const running = f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER, { signal: controller.signal }), [call('hang', {})]);
    setTimeout(() => controller.abort(new Error('stop')), 50);
    const [out] = await running;
    expect(out).toMatchObject({ status: 'error' });
    expect(out!.output).toContain('turn was stopped');
    expect(hangAborted.at(-1)).toContain('stop');
  });

  it('caps output with a truncation note', async () => {
    const [out] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('echo', { text: 'abcdefghij', times: 15 })]);
    expect(out!.status).toBe('ok');
    expect(out!.output).toBe(`${'abcdefghij'.repeat(10)}\n[truncated 50 chars]`);
  });

  it('runs at most two tools at once and returns outcomes in call order', async () => {
    intervals.length = 0;
    const ms = [150, 50, 100, 50, 80];
    const calls = ms.map((m, i) => call('napper', { ms: m }, `n${i}`));
    const started: string[] = [];
    const ended: string[] = [];
    const outs = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), calls, {
      onStart: (c) => void started.push(c.id),
      onEnd: (o: ToolCallOutcome) => void ended.push(o.id),
    });
    expect(outs.map((o) => o.id)).toEqual(['n0', 'n1', 'n2', 'n3', 'n4']);
    expect(outs.map((o) => JSON.parse(o.output).slept)).toEqual(ms);
    expect(started).toHaveLength(5);
    expect(ended).toHaveLength(5);
    // At every moment at most two tool runs overlap.
    const points = intervals.flatMap((iv) => [iv.start + 1, iv.end - 1]);
    for (const t of points) {
      const running = intervals.filter((iv) => iv.start <= t && t < iv.end).length;
      expect(running).toBeLessThanOrEqual(2);
    }
    // …and they did run in parallel (two at the same time at some point).
    expect(Math.max(...points.map((t) => intervals.filter((iv) => iv.start <= t && t < iv.end).length))).toBe(2);
  });

  it('honours plugin_settings per channel at execution and in specsFor', async () => {
    const admin = f.ctx(TrustLevel.ADMIN);
    await f.app.services.plugins.set(admin, 'echo', 'whatsapp', false);
    const wa = f.toolContext(TrustLevel.MEMBER, { channel: 'whatsapp' });
    const [off] = await f.pipeline.runAll(wa, [call('echo', { text: 'x' })]);
    expect(off).toMatchObject({ status: 'refused' });
    expect(off!.output).toContain('turned off on the whatsapp channel');
    const [on] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('echo', { text: 'x' })]);
    expect(on!.status).toBe('ok');

    expect((await f.registry.specsFor(f.ctx(TrustLevel.MEMBER), 'whatsapp')).map((s) => s.name)).not.toContain('echo');
    expect((await f.registry.specsFor(f.ctx(TrustLevel.MEMBER), 'telegram')).map((s) => s.name)).toContain('echo');

    // defaultEnabled: false is off until a setting turns it on (globally here).
    const [optOff] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('opt_in', {})]);
    expect(optOff!.status).toBe('refused');
    await f.app.services.plugins.set(admin, 'opt_in', null, true);
    const [optOn] = await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('opt_in', {})]);
    expect(optOn!.status).toBe('ok');
  });

  it('shows the model only tools the sender may use, with JSON schemas', async () => {
    const specs = await f.registry.specsFor(f.ctx(TrustLevel.MEMBER), 'telegram');
    const names = specs.map((s) => s.name);
    expect(names).toContain('echo');
    expect(names).not.toContain('admin_only');
    const echo = specs.find((s) => s.name === 'echo')!;
    expect(echo.parameters).toMatchObject({
      type: 'object',
      properties: { text: { type: 'string', maxLength: 50 }, times: { type: 'integer', default: 1 } },
      required: ['text'],
    });
    expect(echo.parameters).not.toHaveProperty('$schema');
    expect((await f.registry.specsFor(f.ctx(TrustLevel.ADMIN), 'telegram')).map((s) => s.name)).toContain('admin_only');
  });

  it('describes every tool with enabled and usable flags', async () => {
    const list = await f.registry.describeFor(f.ctx(TrustLevel.TRUSTED), 'whatsapp');
    expect(list.find((t) => t.name === 'admin_only')).toEqual({
      name: 'admin_only',
      description: 'For admins.',
      minTrust: TrustLevel.ADMIN,
      requiresApproval: false,
      enabled: true,
      usable: false,
    });
    expect(list.find((t) => t.name === 'echo')).toMatchObject({ enabled: false, usable: false });
    expect(list.find((t) => t.name === 'guest_floor')).toMatchObject({ minTrust: TrustLevel.MEMBER, usable: true });
  });

  it('records every call as tool.call with status and duration but only a short argument summary', async () => {
    const secret = 'sk-verysecretvalue-' + 'x'.repeat(100);
    await f.pipeline.runAll(f.toolContext(TrustLevel.MEMBER), [call('echo', { text: 'y', api_key: secret }, 'audited')]);
    const entries = await f.audit('tool.call');
    const entry = entries.find((e) => e.details?.callId === 'audited')!;
    expect(entry).toBeDefined();
    expect(entry.details).toMatchObject({ tool: 'echo', status: 'invalid', sessionId: 'session-1', turnId: 'turn-1' });
    expect(typeof entry.details!.durationMs).toBe('number');
    expect(JSON.stringify(entry.details)).not.toContain('verysecret');
    expect(String(entry.details!.args)).toContain('api_key=[redacted]');
    // every call so far left a tool.call entry
    expect(entries.length).toBeGreaterThanOrEqual(20);
  });

  it('rejects duplicate and badly named tools at registration', () => {
    const t = { name: 'echo', description: '', schema: z.object({}), minTrust: TrustLevel.MEMBER, run: async () => '' };
    expect(() => f.registry.register(t)).toThrow('already registered');
    expect(() => f.registry.register({ ...t, name: 'Bad Name' })).toThrow('invalid');
  });
});
