import { OverviewProvidersDocument, type OverviewQuery } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { Link } from '../../lib/router';
import { Badge } from '../../components/ui';
import { ProviderHealthBadge } from '../models/provider-health-badge';

/** Platform channels the server knows; those its config does not turn on are listed as not set up. */
const KNOWN_CHANNELS = ['telegram', 'whatsapp', 'web', 'tui'];

/** Model provider rows of the overview's health table (with the roles each serves first). */
export function ProviderRows() {
  const q = useQuery(OverviewProvidersDocument, {}, { pollMs: 15_000 });
  if (q.error) {
    return (
      <tr>
        <td>model providers</td>
        <td className="num small muted">{q.error.message}</td>
      </tr>
    );
  }
  return (
    <>
      {q.data?.modelProviders.map((p) => {
        const primaryFor = p.routes.filter((r) => r.position === 0).map((r) => r.role);
        return (
          <tr key={p.name}>
            <td>
              <Link to="/models">model {p.name}</Link>
              {primaryFor.length ? <span className="small muted"> · {primaryFor.join(', ')}</span> : null}
              {p.probeError ? <div className="small danger-text">{p.probeError}</div> : null}
            </td>
            <td className="num">
              <ProviderHealthBadge health={p.health} />
              {q.data?.serverInfo.usingMockModel ? (
                <div className="small muted">
                  <Link to="/models">no model configured</Link>
                </div>
              ) : null}
            </td>
          </tr>
        );
      })}
    </>
  );
}

/** Channel rows: every known channel, those this server does not run marked "not set up". */
export function ChannelRows({ channels }: { channels: OverviewQuery['channels'] | undefined }) {
  if (!channels) return null;
  const names = [...new Set([...channels.map((c) => c.name), ...KNOWN_CHANNELS])];
  return (
    <>
      {names.map((name) => {
        const c = channels.find((x) => x.name === name);
        return (
          <tr key={name}>
            <td>
              {name === 'telegram' || name === 'whatsapp' ? <Link to="/channels">channel {name}</Link> : <>channel {name}</>}
              {c?.lastError ? <div className="small muted">{c.lastError}</div> : null}
            </td>
            <td className="num">
              {!c ? (
                <Link to="/channels" className="small" aria-label={`${name} not set up: set it up on the Channels page`}>
                  not set up
                </Link>
              ) : c.enabled ? (
                <Badge value={c.state} />
              ) : (
                <Badge value="disabled" />
              )}
            </td>
          </tr>
        );
      })}
    </>
  );
}

/** Version, uptime and runtime of the server process that answered. */
export function ServerFacts() {
  const q = useQuery(OverviewProvidersDocument, {}, { pollMs: 15_000 });
  const s = q.data?.serverInfo;
  if (!s) return null;
  const up = s.uptimeSeconds;
  const uptime = up < 3600 ? `${Math.floor(up / 60)} min` : up < 86_400 ? `${Math.floor(up / 3600)} h ${Math.floor((up % 3600) / 60)} min` : `${Math.floor(up / 86_400)} d ${Math.floor((up % 86_400) / 3600)} h`;
  return (
    <p className="small muted" data-testid="server-facts">
      Muninn {s.version} · up {uptime} · Node {s.nodeVersion}
    </p>
  );
}
