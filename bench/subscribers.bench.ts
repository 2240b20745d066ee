import type { Client } from 'graphql-ws';
import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { modelConfig } from './chat.bench';
import { ChatSession, wsClient } from './support/chat';
import type { BenchContext } from './support/context';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { summarize } from './support/stats';

const DELTAS = `subscription Ev($sessionId: ID!) { sessionEvents(sessionId: $sessionId) { __typename ... on ReplyDelta { seq text } } }`;

/** 1000 (quick: 200) graphql-ws subscribers of one session while a turn streams 200 deltas: order and fan-out lag. */
export async function subscribersBench(b: BenchContext): Promise<void> {
  const subscribers = b.quick ? 200 : 1000;
  const model = await FakeOpenAIServer.start({ chunks: 3 });
  const server = await BenchServer.start({ config: modelConfig(model), cpuProfDir: b.cpuProfDir });
  const http = new HttpClient(server.url, 4);
  const clients: Client[] = [];
  const chat = new ChatSession(http, server.url, server.ownerToken);
  try {
    await chat.open();
    const received: Array<Array<{ seq: number; at: number }>> = Array.from({ length: subscribers }, () => []);
    for (let i = 0; i < subscribers; i += 50) {
      const batch = Array.from({ length: Math.min(50, subscribers - i) }, (_, k) => i + k);
      await Promise.all(
        batch.map(
          (n) =>
            new Promise<void>((resolve, reject) => {
              const c = wsClient(server.url, server.ownerToken);
              clients.push(c);
              c.on('connected', () => setTimeout(resolve, 20));
              c.subscribe<{ sessionEvents: { __typename: string; seq: number } }>(
                { query: DELTAS, variables: { sessionId: chat.sessionId } },
                {
                  next: (v) => {
                    const e = v.data?.sessionEvents;
                    if (e?.__typename === 'ReplyDelta') received[n]!.push({ seq: e.seq, at: performance.now() });
                  },
                  error: (err) => reject(new Error(JSON.stringify(err))),
                  complete: () => undefined,
                },
              );
            }),
        ),
      );
    }
    await new Promise((r) => setTimeout(r, 500));
    // The server sends at most one ReplyDelta per 50 ms, so the pieces come 110 ms apart
    // (room for timer lag on a busy machine).
    const deltas = b.quick ? 20 : 200;
    const text = Array.from({ length: deltas }, (_, i) => `w${i}`).join(' ');
    model.enqueue({ text, chunks: deltas, chunkDelayMs: 110 });
    await chat.turn('stream to everyone', 120_000);
    // Let the last frames reach every subscriber.
    await new Promise((r) => setTimeout(r, 1000));
    const first = new Map<number, number>();
    for (const list of received) for (const { seq, at } of list) first.set(seq, Math.min(first.get(seq) ?? Infinity, at));
    const lags: number[] = [];
    let inOrder = 0;
    let complete = 0;
    for (const list of received) {
      if (list.length === first.size) complete++;
      if (list.every((e, i) => i === 0 || e.seq > list[i - 1]!.seq)) inOrder++;
      for (const { seq, at } of list) lags.push(at - first.get(seq)!);
    }
    const s = summarize(lags);
    b.results.add({
      benchmark: `${subscribers} subscribers, ${first.size} deltas (lag behind the first receiver)`,
      latency: s,
      target: 'every delta in order, p99 lag ≤ 100 ms',
      // Pieces the server coalesced (at most one ReplyDelta per 50 ms) arrive as one delta: what counts is
      // that every subscriber got every delta that was sent, in order.
      meets: first.size > 0 && inOrder === subscribers && complete === subscribers && s.p99 <= 100,
      note: `${complete}/${subscribers} got every delta, ${inOrder}/${subscribers} in order; ${deltas} pieces from the model arrived as ${first.size} deltas`,
    });
  } finally {
    await chat.close();
    await Promise.all(clients.map((c) => c.dispose()));
    http.close();
    await server.stop();
    await model.close();
  }
}
