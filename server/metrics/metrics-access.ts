import { timingSafeEqual } from 'node:crypto';

/** Who may scrape `/metrics` (`metrics.token`): the bearer of the token, or only loopback clients when none is set. */
export interface MetricsAccess {
  /** null when the scrape may proceed; otherwise the HTTP status and a message saying how to get in. */
  check(authorization: string | undefined, remoteAddress: string | undefined): { status: 401 | 403; message: string } | null;
}

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\./.test(a);
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function metricsAccess(token: string | null): MetricsAccess {
  return {
    check(authorization, remoteAddress) {
      if (token) {
        const given = /^Bearer\s+(.+)$/i.exec(authorization ?? '')?.[1]?.trim();
        if (given && sameSecret(given, token)) return null;
        return { status: 401, message: 'Scraping /metrics needs the metrics token: send "Authorization: Bearer <metrics.token>".' };
      }
      if (isLoopback(remoteAddress)) return null;
      return { status: 403, message: '/metrics is served to loopback clients only; set metrics.token (env MUNINN_METRICS_TOKEN) to allow remote scrapes.' };
    },
  };
}
