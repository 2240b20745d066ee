import type { ProviderHealth } from '../../gql/graphql';
import { Badge } from '../../components/ui';

const TONE: Record<ProviderHealth, string> = { UP: 'ok', DEGRADED: 'warn', DOWN: 'danger' };
const WORD: Record<ProviderHealth, string> = { UP: 'up', DEGRADED: 'degraded', DOWN: 'down' };

/** up / degraded / down, coloured. */
export function ProviderHealthBadge({ health }: { health: ProviderHealth }) {
  return <Badge value={WORD[health]} tone={TONE[health]} />;
}
