import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WebSocketServer } from 'ws';
import type { ChannelStatus } from '../../../../server/channels/channel.types';
import { WhatsAppTransport } from '../../../../server/channels/whatsapp';
import { createLogger } from '../../../../server/common/logger';
import { SecretRedactor } from '../../../../server/common/secret-redactor';
import { fakeSocketFactory } from '../../../support/fakes/fake-whatsapp-socket';
import { LogCapture } from '../../../support/log-capture';

async function waitFor(what: string, check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// A real Baileys `makeWASocket` against a local WebSocket server that accepts and then closes every
// connection (there is no fake WhatsApp server: that would need the Noise/Signal handshake).
describe('WhatsAppTransport with a real Baileys socket', () => {
  let wss: WebSocketServer;
  let dir: string;
  const frames: number[] = [];
  let connections = 0;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-wa-real-'));
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('connection', (ws) => {
      connections += 1;
      ws.once('message', (data: Buffer) => {
        frames.push(data.length); // the noise hello
        ws.close();
      });
    });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  });

  afterAll(async () => {
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('records the close, schedules a reconnect with back-off, and stops cleanly', async () => {
    const { port } = wss.address() as AddressInfo;
    const logs = new LogCapture();
    const statuses: ChannelStatus[] = [];
    const transport = new WhatsAppTransport({
      authDir: path.join(dir, 'whatsapp', 'auth'),
      logger: createLogger({ redactor: new SecretRedactor(), destination: logs, level: 'info' }),
      waWebSocketUrl: `ws://127.0.0.1:${port}/ws/chat`,
      reconnectBaseMs: 300,
      printQr: () => undefined,
      onStatus: (t) => statuses.push(t.status()),
    });
    await transport.start(async () => undefined);

    await waitFor('the close to be recorded', () => Boolean(transport.status().lastError));
    const status = transport.status();
    expect(status.state).not.toBe('CONNECTED');
    expect(status.state).toBe('NEEDS_LINK'); // fresh credentials: this server was never linked
    expect(status.lastError).toMatch(/^connection closed \(428\): Connection Terminated; reconnecting in/);
    expect(frames[0]).toBeGreaterThan(0);
    expect(logs.entries().some((e) => e.msg === 'whatsapp connection closed (428): Connection Terminated; reconnecting' && e.delayMs === 300)).toBe(true);

    await waitFor('the reconnect', () => connections >= 2);
    await waitFor('the second close', () => logs.entries().filter((e) => e.delayMs === 600).length === 1);

    await transport.stop();
    expect(transport.status().state).toBe('STOPPED');
    const seen = connections;
    // A witness transport (fake socket) whose first reconnect waits 600 ms, closed after the stop: once
    // it has reconnected, the stopped transport's reconnect (600 ms, scheduled earlier) would have come.
    const factory = fakeSocketFactory();
    const witness = new WhatsAppTransport({ authDir: path.join(dir, 'witness', 'auth'), logger: createLogger({ redactor: new SecretRedactor(), destination: new LogCapture(), level: 'warn' }), makeSocket: factory.make, reconnectBaseMs: 600, printQr: () => undefined });
    await witness.start(async () => undefined);
    factory.latest().open();
    factory.latest().close(428);
    await waitFor('the witness to reconnect', () => factory.sockets.length === 2);
    await witness.stop();
    expect(connections).toBe(seen);
    expect(statuses.map((s) => s.state)).toEqual(expect.arrayContaining(['STARTING', 'NEEDS_LINK', 'STOPPED']));
  });
});
