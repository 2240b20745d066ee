import { useState, type FormEvent } from 'react';
import { DeleteMemoryDocument, MemoriesDocument, SearchMemoriesDocument, type MemoryFieldsFragment, type MemoryScope, type MemoryType } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView } from '../../components/ui';
import { MemoryForm, TYPES } from './memory-form';

function MemoryRow({ m, score, admin, onChanged }: { m: MemoryFieldsFragment; score?: number; admin: boolean; onChanged(): void }) {
  const [editing, setEditing] = useState(false);
  const del = useMutation(DeleteMemoryDocument);
  const fromFile = !!m.source?.startsWith('workspace:');
  if (editing)
    return (
      <tr>
        <td colSpan={4}>
          <MemoryForm memory={m} admin={admin} onDone={() => (setEditing(false), onChanged())} />
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

export function MemoriesPage() {
  const { me } = useAuth();
  const admin = trustAtLeast(me?.trust, 'ADMIN');
  const [type, setType] = useState<MemoryType | ''>('');
  const [scope, setScope] = useState<MemoryScope | ''>('');
  const [text, setText] = useState('');
  const [query, setQuery] = useState('');
  const [creating, setCreating] = useState(false);
  const list = useQuery(MemoriesDocument, { filter: { type: type || null, scope: scope || null } }, { skip: !!query });
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
            <MemoryForm admin={admin} onDone={() => (setCreating(false), refresh())} />
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
                <select aria-label="Type" value={type} onChange={(e) => setType(e.target.value as MemoryType | '')}>
                  <option value="">All types</option>
                  {TYPES.map((t) => (
                    <option key={t}>{t}</option>
                  ))}
                </select>
                <select aria-label="Scope" value={scope} onChange={(e) => setScope(e.target.value as MemoryScope | '')}>
                  <option value="">All scopes</option>
                  <option>USER</option>
                  <option>GROUP</option>
                  <option>GLOBAL</option>
                </select>
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
                        h.memory ? <MemoryRow key={h.memory.id} m={h.memory} score={h.score} admin={admin} onChanged={refresh} /> : null,
                      )}
                    </tbody>
                  </table>
                </div>
              )}
            </QueryView>
          ) : (
            <QueryView q={list} empty={(d) => (d.memories.edges.length ? null : <Empty title="No memories yet">The summarizer writes them after conversations; you can add one too.</Empty>)}>
              {(d) => (
                <div className="table-wrap">
                  <table aria-label="Memories">
                    {head}
                    <tbody>
                      {d.memories.edges.map(({ node }) => (
                        <MemoryRow key={node.id} m={node} admin={admin} onChanged={refresh} />
                      ))}
                    </tbody>
                  </table>
                  <p className="small muted">{d.memories.totalCount} memories</p>
                </div>
              )}
            </QueryView>
          )}
        </Card>
      </div>
    </>
  );
}
