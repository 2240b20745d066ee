import { useEffect, useState } from 'react';
import { CronPreviewDocument, type CronPreviewQuery } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';

export type CronPreviewResult = CronPreviewQuery['cronPreview'];

/**
 * The server's verdict on a cron expression (the same check createBeat makes) and its next five runs,
 * asked 300 ms after the last keystroke; null while empty or asking.
 */
export function useCronPreview(cron: string, timezone: string): { preview: CronPreviewResult | null; checking: boolean } {
  const { client } = useAuth();
  const [preview, setPreview] = useState<CronPreviewResult | null>(null);
  const [checking, setChecking] = useState(false);
  useEffect(() => {
    const expr = cron.trim();
    if (!client || !expr) {
      setPreview(null);
      return;
    }
    let live = true;
    setChecking(true);
    const t = setTimeout(async () => {
      try {
        const r = await client.request(CronPreviewDocument, { cron: expr, timezone: timezone.trim() || null });
        if (live) setPreview(r.cronPreview);
      } catch (e) {
        if (live) setPreview({ valid: false, error: (e as Error).message, description: null, timezone, nextRuns: [] });
      } finally {
        if (live) setChecking(false);
      }
    }, 300);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [client, cron, timezone]);
  return { preview, checking };
}
