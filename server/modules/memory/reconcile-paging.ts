// === Paging of the reads that compare the memories table with the index (MemoryIndexer.reconcile)
// At 100k memories one read of every row held the event loop for about half a second, at start and at
// every reconcile; read in pages, with the loop free between them, no request waits for more than a page.

/** Rows read per page (memories by id, index entries by seq). */
export const RECONCILE_PAGE = 2000;

/** Lets the event loop run what waits (requests, turns) before going on. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
