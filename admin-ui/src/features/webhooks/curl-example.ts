/** A ready `curl` call of a webhook: POST with its secret as a Bearer token and a small JSON body. */
export function curlExample(origin: string, path: string, secret: string): string {
  return [
    `curl -sS -X POST '${origin}${path}' \\`,
    `  -H 'Authorization: Bearer ${secret}' \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -H "Idempotency-Key: $(date +%s)" \\`,
    `  -d '{"event":"test","message":"Hello from curl"}'`,
  ].join('\n');
}
