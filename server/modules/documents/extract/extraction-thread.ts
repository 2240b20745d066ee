import { parentPort, workerData } from 'node:worker_threads';
import { extractDocument } from './extract-document';
import type { ExtractionRequest } from './extraction.types';

// === Entry of the extraction thread: one document, then the thread ends. No database here (SQLite
// connections stay on the main thread), only the file and the extraction libraries.

const port = parentPort!;
const request = workerData as ExtractionRequest;
let last = 0;
extractDocument(request, (done, total) => {
  const now = Date.now();
  if (done === total || now - last > 250) {
    last = now;
    port.postMessage({ type: 'progress', done, total });
  }
}).then(
  (result) => port.postMessage({ type: 'result', result }),
  (err: unknown) => port.postMessage({ type: 'error', message: (err as Error)?.message ?? String(err) }),
);
