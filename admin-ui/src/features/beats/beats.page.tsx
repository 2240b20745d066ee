import { useState } from 'react';
import { BeatsDocument, DeleteBeatDocument, UpdateBeatDocument, type BeatFieldsFragment } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { Link, useRouter } from '../../lib/router';
import { trustAtLeast } from '../../lib/trust';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { fmtInZone } from '../../lib/time-zone';
import { Badge, Card, ConfirmButton, Empty, ErrorBox, PageHeader, QueryView, Switch } from '../../components/ui';
import { Pager, usePaged } from '../../components/pager';
import { BeatForm } from './beat-form';
import { BeatDetail } from './beat-detail';

export function BeatsPage({ params }: { params: string[] }) {
  if (params[0]) return <BeatDetail id={params[0]} />;
  return <BeatList />;
}

/** Managed beats first, then by name. */
function sorted(beats: BeatFieldsFragment[]): BeatFieldsFragment[] {
  return [...beats].sort((a, b) => Number(b.managed) - Number(a.managed) || a.name.localeCompare(b.name));
}

function BeatList() {
  const { me } = useAuth();
  const { navigate } = useRouter();
  const admin = trustAtLeast(me?.trust, 'ADMIN');
  const mayWrite = trustAtLeast(me?.trust, 'TRUSTED');
  const q = useQuery(BeatsDocument, {}, { pollMs: 15_000 });
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const beats = sorted(q.data?.beats ?? []);
  const { items, pager } = usePaged(beats, 20);
  return (
    <>
      <PageHeader
        title="Beats"
        subtitle={admin ? 'Scheduled reminders and agent tasks of everyone, and the managed ones from heartbeats.default.json.' : 'Your scheduled reminders and agent tasks.'}
        actions={
          mayWrite ? (
            <button className="primary" onClick={() => (setCreating(true), setNotice(null))} disabled={creating}>
              New beat
            </button>
          ) : null
        }
      />
      <div className="stack">
        {!mayWrite ? (
          <div className="alert info" role="note">
            Creating and changing beats needs TRUSTED trust; you are {me?.trust}. You can see your beats and their runs here; ask an admin to raise your trust.
          </div>
        ) : null}
        {notice ? (
          <div className="alert info" role="status">
            {notice}
          </div>
        ) : null}
        {creating ? (
          <Card title="New beat">
            <BeatForm
              onCancel={() => setCreating(false)}
              onDone={(b) => {
                setCreating(false);
                setNotice(`Beat “${b.name}” created.`);
                void q.refetch();
                navigate(`/beats/${b.id}`);
              }}
            />
          </Card>
        ) : null}
        <Card>
          <QueryView
            q={q}
            empty={(d) =>
              d.beats.length ? null : (
                <Empty title="No beats yet">
                  {mayWrite ? 'Press “New beat” to schedule a reminder or a task, or ask the assistant in chat (“remind me every weekday at 8”).' : 'Once you have TRUSTED trust you can schedule reminders and tasks here or in chat.'}
                </Empty>
              )
            }
          >
            {() => (
              <>
                <div className="table-wrap">
                  <table aria-label="Beats" className="cards">
                    <thead>
                      <tr>
                        <th>Beat</th>
                        {admin ? <th>Owner</th> : null}
                        <th>Schedule</th>
                        <th>Next run</th>
                        <th>Last run</th>
                        <th>On</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((b) => (
                        <BeatRow key={b.id} beat={b} admin={admin} mayWrite={mayWrite} onChanged={() => void q.refetch()} />
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager {...pager} label="Beats" />
              </>
            )}
          </QueryView>
        </Card>
      </div>
    </>
  );
}

function BeatRow({ beat: b, admin, mayWrite, onChanged }: { beat: BeatFieldsFragment; admin: boolean; mayWrite: boolean; onChanged(): void }) {
  const toggle = useMutation(UpdateBeatDocument);
  const del = useMutation(DeleteBeatDocument);
  const writable = mayWrite && !b.managed;
  return (
    <tr data-beat={b.name}>
      <td>
        <Link to={`/beats/${b.id}`}>{b.name}</Link>
        <div className="row small">
          <Badge value={b.kind === 'TASK' ? 'task' : 'reminder'} tone="accent" />
          {b.managed ? <Badge value="managed" /> : null}
        </div>
        <ErrorBox error={toggle.error ?? del.error} />
      </td>
      {admin ? <td data-label="Owner">{b.owner?.displayName ?? (b.managed ? 'server' : '–')}</td> : null}
      <td data-label="Schedule">
        <div>{b.schedule}</div>
        <div className="small muted">
          {b.cron ? <code>{b.cron}</code> : null} {b.timezone}
        </div>
      </td>
      <td data-label="Next run">{b.nextRunAt ? fmtInZone(b.nextRunAt, b.timezone) : <span className="muted">{b.enabled ? 'done' : 'off'}</span>}</td>
      <td data-label="Last run">
        {b.lastRun ? (
          <>
            <Badge value={b.lastRun.status} tone={b.lastRun.status === 'OK' ? 'ok' : b.lastRun.status === 'FAILED' ? 'danger' : 'accent'} />
            <div className="small muted">{fmtAgo(b.lastRun.finishedAt ?? b.lastRunAt)}</div>
          </>
        ) : (
          <span className="muted small">never ran</span>
        )}
      </td>
      <td data-label="On">
        <div className="row">
          <Switch
            checked={b.enabled}
            label={`${b.name} enabled`}
            disabled={!writable || toggle.busy}
            onChange={async (v) => {
              if (await toggle.run({ id: b.id, input: { enabled: v } })) onChanged();
            }}
          />
          {writable ? (
            <ConfirmButton danger label="Delete" title={`Delete “${b.name}”?`} body="Its schedule and run history are deleted." confirmLabel="Delete" onConfirm={async () => void ((await del.run({ id: b.id })) && onChanged())} />
          ) : null}
        </div>
      </td>
    </tr>
  );
}
