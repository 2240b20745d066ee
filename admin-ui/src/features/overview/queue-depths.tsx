import { QueueDepthsDocument } from '../../gql/graphql';
import { useQuery } from '../../lib/use-graphql';
import { Link } from '../../lib/router';
import { QueryView, TableHead } from '../../components/ui';

/** Live queue depths (polled): waiting, running, delayed and failed jobs per queue. */
export function QueueDepths() {
  const q = useQuery(QueueDepthsDocument, {}, { pollMs: 3000 });
  return (
    <QueryView q={q}>
      {(d) => (
        <div className="table-wrap">
        <table aria-label="Queue depths">
          <TableHead columns={['Queue', { label: 'Waiting', num: true }, { label: 'Running', num: true }, { label: 'Delayed', num: true }, { label: 'Failed', num: true }]} />
          <tbody>
            {d.queues.map((x) => (
              <tr key={x.name}>
                <td>
                  <Link to={`/queues?queue=${encodeURIComponent(x.name)}`}>{x.name}</Link>
                </td>
                <td className="num">{x.counts.waiting + x.counts.prioritized}</td>
                <td className="num">{x.counts.active}</td>
                <td className="num">{x.counts.delayed}</td>
                <td className="num">{x.counts.failed ? <span className="badge danger">{x.counts.failed}</span> : 0}</td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
    </QueryView>
  );
}
