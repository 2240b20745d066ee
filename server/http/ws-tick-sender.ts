import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/** Above this many bytes waiting in a socket's buffer, a send waits until its frame is written. */
const EAGER_LIMIT = 256 * 1024;

/**
 * Sends WebSocket frames so that the frames sent to one socket in the same tick leave in one write (a
 * turn's reply and its end, or the deltas of one model chunk, are one syscall instead of one each): the
 * TCP socket is corked at the first frame of a tick and uncorked once the tick's callbacks have run.
 * A send resolves as soon as its frame is queued while little is waiting (so the next event of the same
 * tick joins it), and only once the frame is written when a slow reader has let data pile up, which keeps
 * the sender's backpressure. A failed write closes the socket; its error reaches the socket's listeners.
 */
export class WsTickSender {
  private readonly corked = new WeakSet<WebSocket>();

  send(socket: WebSocket, data: string): Promise<void> {
    if (socket.readyState !== socket.OPEN) return Promise.resolve();
    this.cork(socket);
    if (socket.bufferedAmount < EAGER_LIMIT) {
      socket.send(data);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => socket.send(data, (err) => (err ? reject(err) : resolve())));
  }

  private cork(socket: WebSocket): void {
    const raw = (socket as unknown as { _socket?: Socket })._socket;
    if (!raw || this.corked.has(socket)) return;
    this.corked.add(socket);
    raw.cork();
    process.nextTick(() => {
      this.corked.delete(socket);
      raw.uncork();
    });
  }
}
