import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { WsTickSender } from '../../../server/http/ws-tick-sender';

/**
 * A real ws server on 127.0.0.1 and one client. `writes` counts the flushes of the server's TCP socket (each
 * call of its `_write`/`_writev`, the Writable methods that hand data to the kernel); the client keeps the
 * frames it gets.
 */
async function pair() {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  const accepted = new Promise<WebSocket>((r) => wss.once('connection', (s) => r(s)));
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  await new Promise<void>((r, j) => client.once('open', () => r()).once('error', j));
  const server = await accepted;
  const frames: string[] = [];
  const writes = { count: 0 };
  const raw = (server as unknown as { _socket: Record<'_write' | '_writev', (...a: unknown[]) => unknown> })._socket;
  for (const method of ['_write', '_writev'] as const) {
    const original = raw[method].bind(raw);
    raw[method] = (...a: unknown[]) => {
      writes.count++;
      return original(...a);
    };
  }
  client.on('message', (m) => frames.push(String(m)));
  const until = async (n: number) => {
    for (let i = 0; i < 500 && frames.length < n; i++) await new Promise((r) => setTimeout(r, 5));
  };
  const close = async () => {
    client.terminate();
    await new Promise<void>((r) => wss.close(() => r()));
  };
  return { server, client, writes, frames, until, close };
}

describe('WsTickSender', () => {
  let p: Awaited<ReturnType<typeof pair>>;
  let sender: WsTickSender;
  beforeEach(async () => {
    p = await pair();
    sender = new WsTickSender();
  });
  afterEach(() => p.close());

  it('sends the frames of one tick in one write, in order, and those of later ticks apart', async () => {
    await Promise.all([sender.send(p.server, 'one'), sender.send(p.server, 'two'), sender.send(p.server, 'three')]);
    await p.until(3);
    expect(p.frames).toEqual(['one', 'two', 'three']);
    expect(p.writes.count).toBe(1);

    // Each awaited on its own tick: one write each, which the batching above saved.
    for (const t of ['four', 'five']) {
      await sender.send(p.server, t);
      await new Promise((r) => setImmediate(r));
    }
    await p.until(5);
    expect(p.frames.slice(3)).toEqual(['four', 'five']);
    expect(p.writes.count).toBe(3);
  });

  it('keeps backpressure: behind a large unwritten frame a send resolves only once its frame is written', async () => {
    const big = 'x'.repeat(400 * 1024);
    const first = sender.send(p.server, big);
    let secondDone = false;
    const second = sender.send(p.server, 'after').then(() => (secondDone = true));
    await first;
    await Promise.resolve();
    expect(secondDone).toBe(false);
    await second;
    await p.until(2);
    expect(p.frames.map((f) => f.length)).toEqual([big.length, 5]);
  });

  it('resolves without sending once the socket is closed', async () => {
    p.server.close();
    await new Promise((r) => p.server.once('close', r));
    await expect(sender.send(p.server, 'late')).resolves.toBeUndefined();
  });
});
