import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';

/**
 * Makes the commands a Redis client sends in one tick leave in one socket write: the connection's socket is
 * corked at the first command of a tick and uncorked once the tick's callbacks have run. Under load many
 * turns resume in the same tick (their replies arrived in one read) and each sends its next command; they
 * then cost one syscall instead of one each. Order and replies are unchanged (Redis answers in order), and a
 * command waits at most for the end of the tick it was sent in. Applied to each new connection.
 */
export function corkWritesPerTick(client: Redis): void {
  const patched = new WeakSet<Socket>();
  const patch = () => {
    const stream = (client as unknown as { stream?: Socket }).stream;
    if (!stream || patched.has(stream)) return;
    patched.add(stream);
    const write = stream.write;
    let corked = false;
    stream.write = function (this: Socket, ...args: unknown[]) {
      if (!corked) {
        corked = true;
        this.cork();
        process.nextTick(() => {
          corked = false;
          this.uncork();
        });
      }
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as Socket['write'];
  };
  client.on('connect', patch);
  patch();
}
