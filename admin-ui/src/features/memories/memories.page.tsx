import { useState, type FormEvent } from 'react';
import { DeleteMemoryDocument, MemoriesDocument, MemoryOwnersDocument, SearchMemoriesDocument, type MemoryFieldsFragment, type MemoryScope, type MemoryType } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView } from '../../components/ui';
import { MemoryForm, TYPES } from './memory-form';
import { ReindexCard } from './reindex-card';

const PAGE = 40;

function MemoryRow({ m, score, admin, owner, users, onChanged }: { m: MemoryFieldsFragment; score?: number; admin: boolean; owner: string; users: Owner[]; onChanged(): void }) {
  const [editing, setEditing] = useState(false);
  const del = useMutation(DeleteMemoryDocument);
  const fromFile = !!m.source?.startsWith('workspace:');
  if (editing)
    return (
      <tr>
        <td colSpan={5}>
          <MemoryForm memory={m} admin={admin} users={users} onDone={() => (setEditing(false), onChanged())} />
        </td>
      </tr>
    );
  return (
    <tr>
      <td>
        <div style={{ whiteSpace: 'pre-wrap' }}>{m.content}</div>
        {fromFile ? <div className="small muted">from {m.source} (edit the file instead)</div> : null}
        <ErrorBox error={del.error} />
      </td>
      <td>
        <div className="row">
          <Badge value={m.type} tone="accent" />
          <Badge value={m.scope} />
        </div>
      </td>
      <td>{owner}</td>
      <td className="num">{score !== undefined ? score.toFixed(2) : fmtAgo(m.updatedAt)}</td>
      <td>
        {!fromFile ? (
          <div className="row">
            <button className="small" onClick={() => setEditing(true)}>
              Edit
            </button>
            <ConfirmButton
              danger
              label="Delete"
              title="Delete this memory?"
              body={<q>{m.content.slice(0, 140)}</q>}
              confirmLabel="Delete"
              onConfirm={async () => {
                if (await del.run({ id: m.id })) onChanged();
              }}
            />
          </div>
        ) : null}
      </td>
    </tr>
  );
}

type Owner = { id: string; displayName: string };

/** Who a memory belongs to, in words. */
function ownerOf(m: MemoryFieldsFragment, users: Owner[], me: string | undefined): string {
  if (m.scope === 'GLOBAL') return 'everyone';
  if (m.scope === 'GROUP') return `group ${m.groupId ?? ''}`;
  if (m.userId && m.userId === me) return 'you';
  return users.find((u) => u.id === m.userId)?.displayName ?? m.userId ?? '–';
}

export function MemoriesPage() {
  const { me } = useAuth();
  const admin = trustAtLeast(me?.trust, 'ADMIN');
  const [type, setType] = useState<MemoryType | ''>('');
  const [scope, setScope] = useState<MemoryScope | ''>('');
  const [text, setText] = useState('');
  const [query, setQuery] = useState('');
  const [creating, setCreating] = useState(false);
  const [userId, setUserId] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const owners = useQuery(MemoryOwnersDocument, {}, { skip: !admin });
  const users: Owner[] = owners.data?.users.edges.map((e) => e.node) ?? [];
  const list = useQuery(MemoriesDocument, { first: PAGE, after: cursors.at(-1) ?? null, filter: { type: type || null, scope: scope || null, userId: userId || null } }, { skip: !!query });
  const owner = (m: MemoryFieldsFragment) => ownerOf(m, users, me?.id);
  const filterBy = <T,>(set: (v: T) => void) => (v: T) => (setCursors([]), set(v));
  const search = useQuery(SearchMemoriesDocument, { query, limit: 25 }, { skip: !query });
  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    setQuery(text.trim());
  };
  const refresh = () => void (query ? search.refetch() : list.refetch());
  const head = (
    <thead>
      <tr>
        <th>Memory</th>
        <th>Kind</th>
        <th>Owner</th>
        <th className="num">{query ? 'Score' : 'Updated'}</th>
        <th />
      </tr>
    </thead>
  );
  return (
    <>
      <PageHeader
        title="Memories"
        subtitle={admin ? 'Long-term memories of everyone (hybrid keyword + vector search).' : 'Your own and global memories.'}
        actions={
          <button className="primary" onClick={() => setCreating(true)}>
            New memory
          </button>
        }
      />
      <div className="stack">
        {creating ? (
          <Card title="New memory">
            <MemoryForm admin={admin} users={users} onDone={() => (setCreating(false), refresh())} />
          </Card>
        ) : null}
        <Card>
          <div className="row" style={{ marginBottom: 12 }}>
            <form className="row" onSubmit={onSearch} role="search" style={{ flex: 1 }}>
              <input style={{ flex: 1, minWidth: 180 }} aria-label="Search memories" placeholder="Search memories…" value={text} onChange={(e) => setText(e.target.value)} />
              <button type="submit">Search</button>
              {query ? (
                <button type="button" className="ghost" onClick={() => (setQuery(''), setText(''))}>
                  Clear
                </button>
              ) : null}
            </form>
            {!query ? (
              <>
                <select aria-label="Type" value={type} onChange={(e) => filterBy(setType)(e.target.value as MemoryType | '')}>
                  <option value="">All types</option>
                  {TYPES.map((t) => (
                    <option key={t}>{t}</option>
                  ))}
                </select>
                <select aria-label="Scope" value={scope} onChange={(e) => filterBy(setScope)(e.target.value as MemoryScope | '')}>
                  <option value="">All scopes</option>
                  <option>USER</option>
                  <option>GROUP</option>
                  <option>GLOBAL</option>
                </select>
                {admin ? (
                  <select aria-label="Owner" value={userId} onChange={(e) => filterBy(setUserId)(e.target.value)}>
                    <option value="">All users</option>
                    {users.map((u) => (
                      <option key={u.id} value={u.id}>
                        {u.displayName}
                      </option>
                    ))}
                  </select>
                ) : null}
              </>
            ) : null}
          </div>
          {query ? (
            <QueryView q={search} empty={(d) => (d.searchMemories.length ? null : <Empty title="No memory matches">Try other words.</Empty>)}>
              {(d) => (
                <div className="table-wrap">
                  <table aria-label="Search results">
                    {head}
                    <tbody>
                      {d.searchMemories.map((h) =>
                        h.memory ? <MemoryRow key={h.memory.id} m={h.memory} score={h.score} admin={admin} owner={owner(h.memory)} users={users} onChanged={refresh} /> : null,
                      )}
                    </tbody>
                  </table>
                </div>
              )}
            </QueryView>
          ) : (
            <QueryView q={list} empty={(d) => (d.memories.edges.length ? null : <Empty title="No memories yet">The summarizer writes them after conversations; add one with “New memory”.</Empty>)}>
              {(d) => (
                <div className="table-wrap">
                  <table aria-label="Memories">
                    {head}
                    <tbody>
                      {d.memories.edges.map(({ node }) => (
                        <MemoryRow key={node.id} m={node} admin={admin} owner={owner(node)} users={users} onChanged={refresh} />
                      ))}
                    </tbody>
                  </table>
                  <div className="row spread">
                    <p className="small muted">
                      {d.memories.totalCount} memories{d.memories.totalCount > PAGE ? ` · page ${cursors.length + 1} of ${Math.ceil(d.memories.totalCount / PAGE)}` : ''}
                    </p>
                    {d.memories.totalCount > PAGE ? (
                      <div className="row">
                        <button className="small" disabled={!cursors.length} onClick={() => setCursors((c) => c.slice(0, -1))}>
                          Previous page
                        </button>
                        <button
                          className="small"
                          disabled={!d.memories.pageInfo.hasNextPage}
                          onClick={() => setCursors((c) => [...c, d.memories.pageInfo.endCursor!])}
                        >
                          Next page
                        </button>
                      </div>
                    ) : null}
                  </div>
                </div>
              )}
            </QueryView>
          )}
        </Card>
        {admin ? <ReindexCard users={users} /> : null}
      </div>
    </>
  );
}
