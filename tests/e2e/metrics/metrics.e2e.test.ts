import { startTestApp, type TestApp } from '../../support/test-app';
import { eventually, send } from '../../support/chat-helpers';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { EventCollector } from '../../support/session-events';
import type { GraphQLTestClient } from '../../support/graphql-client';

/** Parses the Prometheus text format into `name{labels}` → value. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

function sum(samples: Map<string, number>, prefix: string, labelPart = ''): number {
  let total = 0;
  for (const [k, v] of samples) if (k.startsWith(prefix) && k.includes(labelPart)) total += v;
  return total;
}

async function scrape(url: string, token?: string): Promise<Response> {
  return fetch(`${url}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
}

describe('/metrics (Prometheus)', () => {
  const TOKEN = 'metrics-secret-for-the-test';
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start({ chunks: 4 });
    t = await startTestApp({
      config: {
        metrics: { token: TOKEN },
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', context_window: 8192, max_concurrency: 2 } } },
      },
    });
    owner = t.client(t.ownerToken);
  });
  afterAll(async () => {
    await owner.close();
    await t.close();
    await model.close();
  });

  it('refuses a scrape without the metrics token, or with a wrong one', async () => {
    const none = await scrape(t.url);
    expect(none.status).toBe(401);
    expect(await none.text()).toMatch(/Authorization: Bearer/);
    expect((await scrape(t.url, 'wrong')).status).toBe(401);
    expect((await scrape(t.url, t.ownerToken)).status).toBe(401);
  });

  it('shows turn counters and latency histograms moving after a load, and the queue, token and process metrics', async () => {
    const before = parse(await (await scrape(t.url, TOKEN)).text());
    expect(sum(before, 'muninn_turns_total', 'status="done"')).toBe(0);
    expect(before.get('muninn_turn_duration_seconds_count{status="done"}') ?? 0).toBe(0);

    const first = await send(owner, 'Hello 0');
    const events = new EventCollector(owner.wsClient(), first.sessionId);
    for (let i = 1; i < 5; i++) await send(owner, `Hello ${i}`, first.sessionId);
    // The open subscription is counted while it runs.
    await eventually(async () => sum(parse(await (await scrape(t.url, TOKEN)).text()), 'muninn_subscriptions_open', 'kind="sessionEvents"') >= 1, 10_000, 'an open subscription');
    await eventually(async () => sum(parse(await (await scrape(t.url, TOKEN)).text()), 'muninn_turns_total', 'status="done"') >= 5, 30_000, 'five finished turns');
    events.stop();

    const res = await scrape(t.url, TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const after = parse(await res.text());
    expect(after.get('muninn_turn_duration_seconds_count{status="done"}')).toBeGreaterThanOrEqual(5);
    expect(after.get('muninn_turn_duration_seconds_sum{status="done"}')).toBeGreaterThan(0);
    expect(after.get('muninn_turn_first_delta_seconds_count')).toBeGreaterThanOrEqual(5);
    expect(sum(after, 'muninn_model_call_duration_seconds_count', 'outcome="ok"')).toBeGreaterThanOrEqual(5);
    expect(sum(after, 'muninn_model_tokens_total', 'kind="output"')).toBeGreaterThan(0);
    // Queue depths per queue and state, read from BullMQ at scrape time.
    expect(after.has('muninn_queue_jobs{queue="turns",state="waiting"}')).toBe(true);
    expect(after.has('muninn_queue_jobs{queue="model-calls.fake",state="failed"}')).toBe(true);
    // Node's process metrics.
    expect(after.get('muninn_process_resident_memory_bytes')).toBeGreaterThan(0);
    await eventually(async () => sum(parse(await (await scrape(t.url, TOKEN)).text()), 'muninn_subscriptions_open', 'kind="sessionEvents"') === 0, 10_000, 'the subscription to be closed');
  });

  it('counts failed job attempts per queue and failed turns by status', async () => {
    model.enqueue({ error: { status: 400, message: 'bad request', code: null, type: 'invalid_request_error' } } as never);
    const sent = await send(owner, 'This one fails');
    expect(sent.status).toBe('QUEUED');
    const samples = await eventually(async () => {
      const s = parse(await (await scrape(t.url, TOKEN)).text());
      return sum(s, 'muninn_turns_total', 'status="failed"') >= 1 && s;
    }, 30_000, 'a failed turn');
    expect(sum(samples, 'muninn_job_failures_total', 'queue="model-calls.fake"')).toBeGreaterThanOrEqual(1);
    expect(sum(samples, 'muninn_model_call_duration_seconds_count', 'outcome="error"')).toBeGreaterThanOrEqual(1);
  });
});

describe('/metrics without a token', () => {
  it('is served to loopback clients and can be turned off', async () => {
    const on = await startTestApp({ workers: false });
    const off = await startTestApp({ workers: false, config: { metrics: { enabled: false } } });
    try {
      const res = await scrape(on.url);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE muninn_turns_total counter');
      expect((await scrape(off.url)).status).toBe(404);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
