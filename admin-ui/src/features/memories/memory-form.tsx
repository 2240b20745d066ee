import { useState, type FormEvent } from 'react';
import { CreateMemoryDocument, UpdateMemoryDocument, type MemoryFieldsFragment, type MemoryScope, type MemoryType } from '../../gql/graphql';
import { useMutation } from '../../lib/use-graphql';
import { ErrorBox } from '../../components/ui';

export const TYPES: MemoryType[] = ['FACT', 'LESSON', 'REMINDER', 'SUMMARY'];

/** Create a memory, or edit one (`memory` given): content, type, importance; scope on create. */
export function MemoryForm({ memory, admin, users = [], onDone }: { memory?: MemoryFieldsFragment; admin: boolean; users?: Array<{ id: string; displayName: string }>; onDone(): void }) {
  const [content, setContent] = useState(memory?.content ?? '');
  const [type, setType] = useState<MemoryType>(memory?.type ?? 'FACT');
  const [scope, setScope] = useState<MemoryScope>(memory?.scope ?? 'USER');
  const [importance, setImportance] = useState(memory?.importance ?? 0.5);
  const [owner, setOwner] = useState('');
  const create = useMutation(CreateMemoryDocument);
  const update = useMutation(UpdateMemoryDocument);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = memory
      ? await update.run({ id: memory.id, input: { content, type, importance } })
      : await create.run({ input: { content, type, scope, importance, userId: scope === 'USER' && owner ? owner : null } });
    if (r) onDone();
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={memory ? 'Edit memory' : 'New memory'}>
      <label className="field">
        Content
        <textarea required rows={3} value={content} onChange={(e) => setContent(e.target.value)} />
      </label>
      <div className="row">
        <label className="field">
          Type
          <select value={type} onChange={(e) => setType(e.target.value as MemoryType)}>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        {!memory ? (
          <label className="field">
            Scope
            <select value={scope} onChange={(e) => setScope(e.target.value as MemoryScope)}>
              <option value="USER">USER (one person)</option>
              {admin ? <option value="GLOBAL">GLOBAL</option> : null}
            </select>
          </label>
        ) : null}
        {!memory && admin && scope === 'USER' ? (
          <label className="field">
            For
            <select value={owner} onChange={(e) => setOwner(e.target.value)}>
              <option value="">me</option>
              {users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.displayName}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label className="field">
          Importance {importance.toFixed(1)}
          <input type="range" min={0} max={1} step={0.1} value={importance} onChange={(e) => setImportance(Number(e.target.value))} />
        </label>
      </div>
      <ErrorBox error={create.error ?? update.error} />
      <div className="row" style={{ justifyContent: 'flex-end' }}>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <button className="primary" type="submit" disabled={create.busy || update.busy}>
          {memory ? 'Save' : 'Create'}
        </button>
      </div>
    </form>
  );
}
