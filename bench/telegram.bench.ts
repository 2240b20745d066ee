import { randomBytes } from 'node:crypto';
import { FakeOpenAIServer } from '../tests/support/fakes/fake-openai-server';
import { FakeTelegramServer, type FakeSentMessage } from '../tests/support/fakes/fake-telegram-server';
import { modelConfig } from './chat.bench';
import type { BenchContext } from './support/context';
import { fakeModelFloor, httpFloor } from './support/floors';
import { HttpClient } from './support/http-client';
import { BenchServer } from './support/server';
import { sleep, summarize } from './support/stats';

/** A Telegram turn: the fake Bot API hands the update to the long poll → the reply's sendMessage arrives. */
export async function telegramBench(b: BenchContext): Promise<void> {
  const token = `${100000 + (randomBytes(3).readUIntBE(0, 3) % 800000)}:AA${randomBytes(24).toString('base64url').slice(0, 33)}`;
  const tg = await FakeTelegramServer.start({ token });
  const model = await FakeOpenAIServer.start({ chunks: 2 });
  const server = await BenchServer.start({
    config: { ...modelConfig(model), channels: { telegram: { enabled: true, bot_token: token, api_root: tg.url } } },
    cpuProfDir: b.cpuProfDir,
  });
  const http = new HttpClient(server.url, 4);
  // Every sendMessage the fake receives, with its arrival time.
  let waiter: ((m: FakeSentMessage) => void) | null = null;
  const push = tg.sentMessages.push.bind(tg.sentMessages);
  tg.sentMessages.push = (...items: FakeSentMessage[]) => {
    const n = push(...items);
    for (const m of items) waiter?.(m);
    return n;
  };
  try {
    const floorModel = await fakeModelFloor(model, 50);
    const floorHttp = await httpFloor(1, 500);
    const floor = floorModel.latency.p50 + 2 * floorHttp.latency.p50;
    const tgUser = 7_000_001;
    const owner = server.ownerToken;
    const u = await http.gql<{ createUser: { id: string } }>(`mutation($i: CreateUserInput!) { createUser(input: $i) { id } }`, { i: { displayName: 'tg bench' } }, owner);
    await http.gql(`mutation($i: LinkIdentityInput!) { linkIdentity(input: $i) { id } }`, { i: { userId: u.createUser.id, channel: 'telegram', handle: String(tgUser) } }, owner);
    const turn = async (text: string): Promise<number> => {
      const t0 = performance.now();
      const got = new Promise<void>((resolve) => {
        waiter = (m) => {
          if (m.chatId === String(tgUser) && m.text.includes(text)) resolve();
        };
      });
      tg.pushMessage({ chatId: tgUser, from: tgUser, text });
      await got;
      waiter = null;
      return performance.now() - t0;
    };
    for (let i = 0; i < 3; i++) await turn(`warm ${i}`);
    for (const [name, pause, count, target, ok] of [
      ['Telegram turn, back-to-back', 0, b.quick ? 4 : 40, "no wait beyond Telegram's per-chat limits (p50 near the 1 s-pause figure)", (p50: number) => p50 <= 100],
      ['Telegram turn, 1 s pause', 1000, b.quick ? 4 : 30, 'p50 ≤ 12 ms, p99 ≤ 40 ms', (p50: number, p99: number) => p50 <= 12 && p99 <= 40],
    ] as const) {
      const lat: number[] = [];
      for (let i = 0; i < count; i++) {
        if (pause) await sleep(pause);
        lat.push(await turn(`${name} ${i}`));
      }
      const s = summarize(lat);
      b.results.add({ benchmark: name, latency: s, floor: { name: 'fake model + 2 HTTP round trips', p50: floor }, target, meets: ok(s.p50, s.p99) });
    }
  } finally {
    http.close();
    await server.stop();
    await tg.close();
    await model.close();
  }
}
