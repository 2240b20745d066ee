/**
 * Security suite: at least 5000 generated hostile GraphQL operations over HTTP and WebSocket (random
 * operations from the schema with right and wrong values, depth/alias/fragment bombs, huge lists and
 * strings, unknown fields, batches, broken JSON, invalid UTF-8 and NUL, protocol-violating graphql-ws
 * frames, subscription floods). No HTTP 5xx, no crash, every error has `extensions.code`, no stack trace
 * or SQL in any message, and the server is healthy afterwards.
 */
import WebSocket from 'ws';
import { dataOf } from '../../support/graphql-client';
import { MeDocument } from '../../support/graphql/generated';
import { createUserWithToken, insertSession } from '../../support/fixtures';
import { startTestApp, type TestApp } from '../../support/test-app';
import { reportFigures } from '../fault/fault-kit';
import { Fuzz, prng } from './fuzz-operations';

const HTTP_OPERATIONS = Number(process.env.FUZZ_HTTP ?? 2600);
const WS_SEQUENCES = Number(process.env.FUZZ_WS ?? 520);
const SEED = Number(process.env.FUZZ_SEED ?? 12);
const LEAK = /\n\s+at |\bat [\w.<>]+ \(|node_modules|\/work\/|\.ts:\d|SQLITE|QueryFailedError|no such (table|column)|SELECT .* FROM|INSERT INTO|UPDATE .* SET|"stack"|TypeORM|ioredis|ECONNREFUSED/i;

interface Tally {
  operations: number;
  http5xx: number;
  errorsWithoutCode: number;
  leaks: number;
  internalErrors: number;
  wsFrames: number;
  wsClose4500: number;
  byStatus: Record<string, number>;
  samples: string[];
}

let t: TestApp;
let tokens: string[];
const tally: Tally = { operations: 0, http5xx: 0, errorsWithoutCode: 0, leaks: 0, internalErrors: 0, wsFrames: 0, wsClose4500: 0, byStatus: {}, samples: [] };

function note(problem: string, detail: string): void {
  if (tally.samples.length < 10) tally.samples.push(`${problem}: ${detail.slice(0, 300)}`);
}

/** Checks one response body: errors carry codes, nothing internal shows. */
function inspect(text: string, what: string): void {
  if (LEAK.test(text)) {
    tally.leaks++;
    note('leak', `${what} → ${text}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return;
  }
  const errors = (json as { errors?: Array<{ extensions?: { code?: unknown } }> } | null)?.errors ?? (Array.isArray(json) ? (json as Array<{ extensions?: { code?: unknown } }>) : []);
  for (const e of errors) {
    if (typeof e?.extensions?.code !== 'string') {
      tally.errorsWithoutCode++;
      note('no code', `${what} → ${JSON.stringify(e).slice(0, 200)}`);
    } else if (e.extensions.code === 'INTERNAL_SERVER_ERROR') {
      tally.internalErrors++;
      note('internal', what);
    }
  }
}

beforeAll(async () => {
  // Workers off: accepted sendMessage calls stay queued; the fuzz is about the API edge.
  t = await startTestApp({ workers: false, config: { log: { level: 'warn' } } });
  const owner = t.client(t.ownerToken);
  const member = await createUserWithToken(owner, 'MEMBER');
  const guest = await createUserWithToken(owner, 'GUEST');
  await insertSession(t, member.id);
  await owner.close();
  tokens = [t.ownerToken, member.token, guest.token, '', 'not-a-token', 'Bearer', 'x'.repeat(5000)];
});

afterAll(async () => {
  await t.close();
});

it(`${HTTP_OPERATIONS} hostile HTTP operations and ${WS_SEQUENCES} hostile WebSocket sequences: no 5xx, codes everywhere, no leaks`, async () => {
  const fuzz = new Fuzz(prng(SEED));
  const requests: Array<() => Promise<void>> = [];
  for (let i = 0; i < HTTP_OPERATIONS; i++) {
    const token = fuzz.pick(tokens);
    const kind = fuzz.int(10);
    let body: string | Buffer;
    let contentType = 'application/json';
    let method = 'POST';
    let query = '';
    if (kind < 5) body = JSON.stringify(fuzz.schemaOperation(fuzz.pick(['query', 'query', 'mutation', 'subscription'] as const)));
    else if (kind < 7) body = JSON.stringify({ query: fuzz.bomb() });
    else if (kind < 9) ({ body, contentType } = fuzz.rawBody());
    else {
      method = 'GET';
      body = '';
      const op = fuzz.chance(0.5) ? fuzz.schemaOperation('mutation') : fuzz.schemaOperation('query');
      query = `?query=${encodeURIComponent(op.query)}&variables=${encodeURIComponent(fuzz.chance(0.8) ? JSON.stringify(op.variables) : '{bad')}`;
    }
    requests.push(async () => {
      const res = await fetch(`${t.url}/graphql${query}`, {
        method,
        headers: { 'content-type': contentType, ...(token ? { authorization: `Bearer ${token}` } : {}), ...(method === 'GET' ? { 'apollo-require-preflight': 'true' } : {}) },
        ...(method === 'POST' ? { body } : {}),
      });
      const text = await res.text();
      tally.operations++;
      tally.byStatus[res.status] = (tally.byStatus[res.status] ?? 0) + 1;
      if (res.status >= 500) {
        tally.http5xx++;
        note('5xx', `${String(body).slice(0, 200)} → ${text}`);
      }
      inspect(text, String(body).slice(0, 200));
    });
  }
  for (let i = 0; i < WS_SEQUENCES; i++) {
    const frames = fuzz.wsFrames(fuzz.pick(tokens));
    requests.push(() => wsSequence(frames));
  }
  // Shuffle HTTP and WebSocket work together and run a few at a time.
  for (let i = requests.length - 1; i > 0; i--) {
    const j = fuzz.int(i + 1);
    [requests[i], requests[j]] = [requests[j]!, requests[i]!];
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < requests.length) await requests[next++]!();
    }),
  );

  // Healthy afterwards: health, readiness and a real query as before.
  const health = await fetch(`${t.url}/healthz`);
  const ready = await fetch(`${t.url}/readyz`);
  const me = dataOf(await t.client(t.ownerToken).http(MeDocument)).me;
  const unexpected = t.logs.entries().filter((e) => Number(e.level) >= 50);
  reportFigures('security-suite', 'fuzz', { ...tally, unexpectedErrorLogLines: unexpected.length, healthz: health.status, readyz: ready.status });
  expect(tally.operations + tally.wsFrames).toBeGreaterThanOrEqual(5000);
  expect(tally.samples).toEqual([]);
  expect({ http5xx: tally.http5xx, noCode: tally.errorsWithoutCode, leaks: tally.leaks, internal: tally.internalErrors, ws4500: tally.wsClose4500 }).toEqual({ http5xx: 0, noCode: 0, leaks: 0, internal: 0, ws4500: 0 });
  expect(unexpected.map((e) => e.msg)).toEqual([]);
  expect([health.status, ready.status, me.trust]).toEqual([200, 200, 'OWNER']);
}, 600_000);

/** Opens a graphql-transport-ws socket, sends the frames, collects what comes back until close or quiet. */
async function wsSequence(frames: Array<string | Buffer>): Promise<void> {
  const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const received: string[] = [];
  let closeCode = 0;
  const closed = new Promise<void>((resolve) => {
    socket.on('close', (code, reason) => {
      closeCode = code;
      received.push(`close ${code} ${reason.toString()}`);
      resolve();
    });
    socket.on('error', () => resolve());
  });
  socket.on('message', (data) => received.push(String(data)));
  const opened = await new Promise<boolean>((resolve) => {
    socket.once('open', () => resolve(true));
    socket.once('error', () => resolve(false));
  });
  if (opened) {
    for (const frame of frames) {
      if (socket.readyState !== socket.OPEN) break;
      socket.send(frame);
      tally.wsFrames++;
    }
    // Give the server until it has answered every subscribe (or closed); then hang up.
    await Promise.race([closed, new Promise((r) => setTimeout(r, 150))]);
    if (socket.readyState === socket.OPEN) socket.close(1000);
    await closed;
  }
  if (closeCode === 4500 || closeCode === 1011) {
    tally.wsClose4500++;
    note('ws 4500', `${frames.map((f) => String(f).slice(0, 80)).join(' | ')} → ${received.join(' | ').slice(0, 300)}`);
  }
  for (const text of received) inspect(text.startsWith('close ') ? JSON.stringify({ close: text }) : text, `ws ${String(frames.at(-1)).slice(0, 120)}`);
}
