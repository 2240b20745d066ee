import { useEffect, useState } from 'react';

export interface Readiness {
  status: string;
  checks: Record<string, string>;
}

/** Polls /readyz (database and Redis), the only non-GraphQL call of the console. */
export function useReadiness(pollMs = 5000): { data: Readiness | null; error: string | null } {
  const [data, setData] = useState<Readiness | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let alive = true;
    const run = async () => {
      try {
        const r = await fetch('/readyz');
        const body = (await r.json()) as Readiness;
        if (alive) (setData(body), setError(null));
      } catch {
        if (alive) setError('The server cannot be reached.');
      }
    };
    void run();
    const t = setInterval(run, pollMs);
    return () => {
      alive = false;
      clearInterval(t);
    };
  }, [pollMs]);
  return { data, error };
}
