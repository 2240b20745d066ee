import type { IncomingMessage } from 'node:http';
import { CloseCode, handleProtocols, makeServer, MessageType, type ServerOptions } from 'graphql-ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../common/logger';
import { WsTickSender } from './ws-tick-sender';

/** Messages a graphql-transport-ws client may send; the others (connection_ack, next, error) are the server's. */
const CLIENT_MESSAGES = new Set<string>([MessageType.ConnectionInit, MessageType.Ping, MessageType.Pong, MessageType.Subscribe, MessageType.Complete]);

export interface GraphQLWsExtra {
  socket: WebSocket;
  request: IncomingMessage;
}

/**
 * graphql-ws on a `ws` server, like graphql-ws's own `useServer`, but a client's protocol violation is the
 * client's mistake: a message type only the server sends closes the socket with 4400 (not 4500), and
 * socket errors a client causes (a frame over the size limit, a bad frame) are logged at debug level,
 * one line, never on the console. Only a fault of ours closes with 4500 and logs at error level.
 */
export function serveGraphQLWs(
  options: ServerOptions<Record<string, unknown>, GraphQLWsExtra>,
  wss: WebSocketServer,
  logger: Logger,
  keepAliveMs = 12_000,
): { dispose(): Promise<void> } {
  const server = makeServer(options);
  const sender = new WsTickSender();
  wss.options.handleProtocols = handleProtocols;
  wss.on('error', (err) => logger.error({ err }, 'WebSocket server error'));
  wss.on('connection', (socket, request) => {
    socket.once('error', (err: Error & { code?: string }) => {
      logger.debug({ code: err.code ?? null, reason: err.message }, 'WebSocket client sent a frame that was refused');
      // ws has already closed with the right code (1009 too big, 1002 protocol error).
    });
    let pongWait: NodeJS.Timeout | null = null;
    const ping = setInterval(() => {
      if (socket.readyState !== socket.OPEN) return;
      pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
      socket.once('pong', () => {
        if (pongWait) clearTimeout(pongWait);
        pongWait = null;
      });
      socket.ping();
    }, keepAliveMs);
    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) => sender.send(socket, data),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (cb) =>
          socket.on('message', async (data) => {
            const text = String(data);
            const type = messageType(text);
            if (type !== null && !CLIENT_MESSAGES.has(type)) {
              socket.close(CloseCode.BadRequest, `Unexpected message of type ${type.slice(0, 40)}: clients may not send it`);
              return;
            }
            try {
              await cb(text);
            } catch (err) {
              logger.error({ err }, 'unexpected error while handling a WebSocket message');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            }
          }),
      },
      { socket, request },
    );
    socket.once('close', (code, reason) => {
      if (pongWait) clearTimeout(pongWait);
      clearInterval(ping);
      void closed(code, String(reason));
    });
  });
  return {
    dispose: async () => {
      for (const client of wss.clients) client.close(1001, 'Going away');
      wss.removeAllListeners();
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

/** The `type` of a JSON message, or null when it has none (graphql-ws then answers 4400 itself). */
function messageType(text: string): string | null {
  try {
    const parsed = JSON.parse(text) as { type?: unknown } | null;
    return parsed && typeof parsed === 'object' && typeof parsed.type === 'string' ? parsed.type : null;
  } catch {
    return null;
  }
}
