import { useState, type FormEvent } from 'react';
import { ClearUserBudgetDocument, SetUserBudgetDocument, UserBudgetsDocument, type BudgetFieldsFragment, type TrustLevel } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { fmtDate, fmtUsd } from '../../lib/format';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { Badge, Card, Empty, ErrorBox, QueryView, TableHead } from '../../components/ui';

/** "2.50" → 2.5, "" → null (unlimited); NaN for anything else. */
function parseLimit(text: string): number | null {
  const t = text.trim();
  return t === '' ? null : Number(t);
}

/** Spent against a limit, with a bar once there is a limit. */
function Spent({ spent, limit, label }: { spent: number; limit: number | null; label: string }) {
  if (limit === null) return <span>{fmtUsd(spent)}</span>;
  const share = limit > 0 ? Math.min(1, spent / limit) : 1;
  const tone = share >= 1 ? 'danger' : share >= 0.8 ? 'warn' : 'ok';
  return (
    <span className="budget-spent">
      {fmtUsd(spent)} <span className="muted">of {fmtUsd(limit)}</span>
      <meter className={`budget-meter ${tone}`} min={0} max={1} value={share} aria-label={`${label}: ${Math.round(share * 100)} % used`} />
    </span>
  );
}

function EditBudget({ userId, name, budget, onDone }: { userId: string; name: string; budget: BudgetFieldsFragment; onDone(): void }) {
  const set = useMutation(SetUserBudgetDocument);
  const clear = useMutation(ClearUserBudgetDocument);
  const [daily, setDaily] = useState(budget.dailyUsd === null ? '' : String(budget.dailyUsd));
  const [monthly, setMonthly] = useState(budget.monthlyUsd === null ? '' : String(budget.monthlyUsd));
  const [invalid, setInvalid] = useState<string | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const dailyUsd = parseLimit(daily);
    const monthlyUsd = parseLimit(monthly);
    if ([dailyUsd, monthlyUsd].some((v) => v !== null && (!Number.isFinite(v) || v < 0))) {
      setInvalid('Limits are amounts in USD of 0 or more; leave a field empty for no limit.');
      return;
    }
    setInvalid(null);
    if (await set.run({ userId, dailyUsd, monthlyUsd })) onDone();
  };
  return (
    <form className="stack" onSubmit={submit} aria-label={`Budget of ${name}`}>
      <div className="row">
        <label className="field">
          Daily limit (USD)
          <input inputMode="decimal" value={daily} onChange={(e) => (setDaily(e.target.value), setInvalid(null))} placeholder="unlimited" size={10} />
        </label>
        <label className="field">
          Monthly limit (USD)
          <input inputMode="decimal" value={monthly} onChange={(e) => (setMonthly(e.target.value), setInvalid(null))} placeholder="unlimited" size={10} />
        </label>
      </div>
      {invalid ? <div className="alert danger">{invalid}</div> : null}
      <ErrorBox error={set.error ?? clear.error} />
      <div className="row">
        <button type="submit" className="primary small" disabled={set.busy}>
          Save budget
        </button>
        {budget.custom ? (
          <button type="button" className="small" disabled={clear.busy} onClick={async () => void ((await clear.run({ userId })) && onDone())}>
            Use the trust default
          </button>
        ) : null}
        <button type="button" className="small" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Whether the signed-in user may change this user's budget (the server checks again). */
function mayEdit(me: TrustLevel | undefined, them: TrustLevel): boolean {
  if (me === 'OWNER') return true;
  return trustAtLeast(me, 'ADMIN') && !trustAtLeast(them, 'ADMIN');
}

/** Every user's limits and what they spent today and this month; limits edited in place. */
export function BudgetsCard() {
  const q = useQuery(UserBudgetsDocument, {});
  const { me } = useAuth();
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <Card title="Budgets">
      <QueryView q={q} empty={(d) => (d.users.edges.length ? null : <Empty title="No users yet" />)}>
        {(d) => (
          <div className="table-wrap">
            <table aria-label="Budgets">
              <TableHead columns={['User', 'Limits', { label: 'Today', num: true }, { label: 'This month', num: true }, 'Resets', '']} />
              <tbody>
                {d.users.edges.map(({ node: u }) => {
                  const b = u.budget;
                  const unlimited = b.dailyUsd === null && b.monthlyUsd === null;
                  return (
                    <tr key={u.id} data-user={u.displayName}>
                      <td>
                        {u.displayName} <Badge value={u.trust} />
                      </td>
                      <td>
                        {editing === u.id ? (
                          <EditBudget
                            userId={u.id}
                            name={u.displayName}
                            budget={b}
                            onDone={() => {
                              setEditing(null);
                              void q.refetch();
                            }}
                          />
                        ) : (
                          <>
                            {unlimited ? 'unlimited' : [b.dailyUsd !== null ? `${fmtUsd(b.dailyUsd)} a day` : null, b.monthlyUsd !== null ? `${fmtUsd(b.monthlyUsd)} a month` : null].filter(Boolean).join(' · ')}
                            <span className="small muted">{b.custom ? ' (set for this user)' : ` (${u.trust} default)`}</span>
                          </>
                        )}
                      </td>
                      <td className="num">
                        <Spent spent={b.spentTodayUsd} limit={b.dailyUsd} label={`${u.displayName} today`} />
                      </td>
                      <td className="num">
                        <Spent spent={b.spentMonthUsd} limit={b.monthlyUsd} label={`${u.displayName} this month`} />
                      </td>
                      <td className="small">{unlimited ? '–' : fmtDate(b.resetsAt)}</td>
                      <td>
                        {editing !== u.id && mayEdit(me?.trust, u.trust) ? (
                          <button className="small" aria-label={`Edit budget of ${u.displayName}`} onClick={() => setEditing(u.id)}>
                            Edit
                          </button>
                        ) : null}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </QueryView>
    </Card>
  );
}
