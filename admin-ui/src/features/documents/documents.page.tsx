import { useEffect, useState } from 'react';
import { ConsoleDeleteDocumentDocument, ConsoleDocumentsDocument, ConsoleReindexDocumentDocument, DocumentOwnersDocument, type DocumentFieldsFragment, type DocumentStatus } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView } from '../../components/ui';
import { Pager } from '../../components/pager';
import { UploadZone } from './upload-zone';

const PAGE = 40;
const WORKING: DocumentStatus[] = ['QUEUED', 'EXTRACTING', 'EMBEDDING'];
const TONE: Record<DocumentStatus, string> = { QUEUED: 'warn', EXTRACTING: 'accent', EMBEDDING: 'accent', READY: 'ok', FAILED: 'danger' };

function fmtBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} B`;
}

type Owner = { id: string; displayName: string };

function ownerOf(d: DocumentFieldsFragment, users: Owner[], me: string | undefined): string {
  if (d.scope === 'GLOBAL') return 'everyone';
  if (d.scope === 'GROUP') return `group ${d.groupId ?? ''}`;
  if (d.userId === me) return 'you';
  return users.find((u) => u.id === d.userId)?.displayName ?? d.userId;
}

/** Where a document is in its ingestion: a badge, the reason of a failure, the progress of the work. */
function StatusCell({ d }: { d: DocumentFieldsFragment }) {
  const working = WORKING.includes(d.status);
  return (
    <div className="doc-progress">
      <Badge value={d.status} tone={TONE[d.status]} />
      {working ? (
        <div className="progress" role="progressbar" aria-label={`Reading ${d.name}`} aria-valuemin={0} aria-valuemax={100} aria-valuenow={d.progress} style={{ marginTop: 6 }}>
          <div style={{ width: `${Math.max(3, d.progress)}%` }} />
        </div>
      ) : null}
      {d.status === 'FAILED' ? <div className="small text-danger">{d.error ?? 'unknown reason'}</div> : null}
    </div>
  );
}

function DocumentRow({ d, owner, onChanged }: { d: DocumentFieldsFragment; owner: string; onChanged(): void }) {
  const del = useMutation(ConsoleDeleteDocumentDocument);
  const reindex = useMutation(ConsoleReindexDocumentDocument);
  const facts = [d.pages ? `${d.pages} pages` : null, d.status === 'READY' ? `${d.chunkCount} ${d.chunkCount === 1 ? 'passage' : 'passages'}` : null, fmtBytes(d.sizeBytes), d.sourceChannel ? `from ${d.sourceChannel}` : null].filter(Boolean);
  return (
    <tr data-document={d.name}>
      <td>
        <div>
          <strong>{d.name}</strong>
        </div>
        <div className="small muted">{facts.join(' · ')}</div>
        <ErrorBox error={del.error ?? reindex.error} />
      </td>
      <td>
        <StatusCell d={d} />
      </td>
      <td>{owner}</td>
      <td className="num">{fmtAgo(d.createdAt)}</td>
      <td>
        <div className="row">
          <button className="small" disabled={reindex.busy || WORKING.includes(d.status)} onClick={async () => (await reindex.run({ id: d.id })) && onChanged()}>
            Read again
          </button>
          <ConfirmButton
            danger
            label="Delete"
            title={`Delete ${d.name}?`}
            body="The file, its passages and their search entries are removed; answers no longer find it."
            confirmLabel="Delete"
            onConfirm={async () => {
              if (await del.run({ id: d.id })) onChanged();
            }}
          />
        </div>
      </td>
    </tr>
  );
}

/**
 * Documents (issue 27): the caller's own and global documents (everyone's for ADMIN), their ingestion
 * status followed live (polled while any is being read), uploads by drag and drop with progress, delete and
 * read again.
 */
export function DocumentsPage() {
  const { me } = useAuth();
  const admin = trustAtLeast(me?.trust, 'ADMIN');
  const [status, setStatus] = useState<DocumentStatus | ''>('');
  const [cursors, setCursors] = useState<string[]>([]);
  const [polling, setPolling] = useState(false);
  const owners = useQuery(DocumentOwnersDocument, {}, { skip: !admin });
  const users: Owner[] = owners.data?.users.edges.map((e) => e.node) ?? [];
  const list = useQuery(ConsoleDocumentsDocument, { first: PAGE, after: cursors.at(-1) ?? null, filter: { status: status || null } }, { pollMs: polling ? 1500 : undefined });
  const working = !!list.data?.documents.edges.some((e) => WORKING.includes(e.node.status));
  useEffect(() => setPolling(working), [working]);
  const refresh = () => void list.refetch();
  return (
    <>
      <PageHeader title="Documents" subtitle={admin ? 'Everyone’s documents, searched with memories and cited in answers.' : 'Your own and global documents, searched with your memories and cited in answers.'} />
      <div className="stack">
        <Card title="Add documents">
          <UploadZone scopes={admin ? ['user', 'global'] : ['user']} onUploaded={() => (setCursors([]), refresh())} />
        </Card>
        <Card
          title="Documents"
          actions={
            <select aria-label="Status" value={status} onChange={(e) => (setCursors([]), setStatus(e.target.value as DocumentStatus | ''))}>
              <option value="">All statuses</option>
              {(['QUEUED', 'EXTRACTING', 'EMBEDDING', 'READY', 'FAILED'] as const).map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          }
        >
          <QueryView q={list} empty={(d) => (d.documents.edges.length ? null : <Empty title="No documents yet">Drop a file above, or send one to the bot on Telegram or WhatsApp.</Empty>)}>
            {(d) => (
              <div className="table-wrap">
                <table aria-label="Documents">
                  <thead>
                    <tr>
                      <th>Document</th>
                      <th>Status</th>
                      <th>Owner</th>
                      <th className="num">Added</th>
                      <th />
                    </tr>
                  </thead>
                  <tbody>
                    {d.documents.edges.map(({ node }) => (
                      <DocumentRow key={node.id} d={node} owner={ownerOf(node, users, me?.id)} onChanged={refresh} />
                    ))}
                  </tbody>
                </table>
                <Pager
                  label="Documents"
                  page={cursors.length}
                  pages={Math.ceil(d.documents.totalCount / PAGE)}
                  total={d.documents.totalCount}
                  size={PAGE}
                  setPage={(p) => setCursors((c) => (p > c.length ? [...c, d.documents.pageInfo.endCursor!] : c.slice(0, -1)))}
                />
              </div>
            )}
          </QueryView>
        </Card>
      </div>
    </>
  );
}
