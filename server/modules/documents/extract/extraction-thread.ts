import { parentPort } from 'node:worker_threads';
import { extractDocument } from './extract-document';
import type { ExtractionRequest } from './extraction.types';

// === Entry of the extraction thread: documents one after the other, as the main thread sends them. No
// database here (SQLite connections stay on the main thread), only the file and the extraction libraries.

const port = parentPort!;
port.on('message', (msg: { id: number; request: ExtractionRequest }) => {
  let last = 0;
  extractDocument(msg.request, (done, total) => {
    const now = Date.now();
    if (done === total || now - last > 250) {
      last = now;
      port.postMessage({ id: msg.id, type: 'progress', done, total });
    }
  }).then(
    (result) => port.postMessage({ id: msg.id, type: 'result', result }),
    (err: unknown) => port.postMessage({ id: msg.id, type: 'error', message: (err as Error)?.message ?? String(err) }),
  );
});
