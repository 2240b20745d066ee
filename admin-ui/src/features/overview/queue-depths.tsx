/** Live queue depths; filled in once the server has the `queues` query. */
export function QueueDepths() {
  return <p className="muted">Queue depths appear here.</p>;
}
