import { useEffect, useRef, useState } from 'react';
import { SetSkillEnabledDocument, SkillSyncProgressDocument, SkillsDocument, SyncSkillsDocument, type SkillSyncProgressSubscription, type SkillsQuery } from '../../gql/graphql';
import { useAuth } from '../../lib/auth';
import { useMutation, useQuery } from '../../lib/use-graphql';
import { fmtAgo } from '../../lib/format';
import { Badge, Card, Empty, ErrorBox, PageHeader, QueryView, Switch } from '../../components/ui';
import { Pager, usePaged } from '../../components/pager';
import { Markdown } from './markdown';

type Skill = SkillsQuery['skills'][number];
type Progress = SkillSyncProgressSubscription['jobProgress'];
interface SyncReport {
  added?: string[];
  updated?: string[];
  removed?: string[];
  unchanged?: number;
  problems?: Array<{ folder: string; message: string }>;
}

/** "Sync now": queues the sync, follows its job to the end and shows what it changed. */
function SyncNow({ onDone }: { onDone(): void }) {
  const { client } = useAuth();
  const sync = useMutation(SyncSkillsDocument);
  const [progress, setProgress] = useState<Progress | null>(null);
  const stop = useRef<(() => void) | null>(null);
  useEffect(() => () => stop.current?.(), []);
  const start = async () => {
    setProgress(null);
    const r = await sync.run({});
    if (!r || !client) return;
    stop.current?.();
    stop.current = client.subscribe(SkillSyncProgressDocument, { jobId: r.syncSkills.jobId }, {
      next: (d) => {
        setProgress(d.jobProgress);
        if (d.jobProgress.state === 'COMPLETED' || d.jobProgress.state === 'FAILED') onDone();
      },
      error: (e) => setProgress({ jobId: r.syncSkills.jobId, state: 'FAILED', percent: null, result: null, error: e.message }),
    });
  };
  const report = (progress?.result ?? null) as SyncReport | null;
  const finished = progress?.state === 'COMPLETED' || progress?.state === 'FAILED';
  return (
    <div className="stack">
      <div className="row">
        <button className="primary" onClick={() => void start()} disabled={sync.busy || (!!progress && !finished)}>
          {progress && !finished ? 'Syncing…' : 'Sync now'}
        </button>
      </div>
      <ErrorBox error={sync.error} />
      {progress && !finished ? (
        <div className="progress" role="progressbar" aria-label="Sync progress" aria-valuenow={Math.round(progress.percent ?? 0)} aria-valuemin={0} aria-valuemax={100}>
          <div style={{ width: `${progress.percent ?? 5}%` }} />
        </div>
      ) : null}
      {progress?.state === 'FAILED' ? <div className="alert" role="alert">The sync failed: {progress.error}</div> : null}
      {progress?.state === 'COMPLETED' && report ? (
        <div className="alert info" role="status" data-testid="sync-result">
          Synced: {report.added?.length ?? 0} added, {report.updated?.length ?? 0} updated, {report.removed?.length ?? 0} removed, {report.unchanged ?? 0} unchanged.
          {[...(report.added ?? []), ...(report.updated ?? [])].length ? <div className="small">Changed: {[...(report.added ?? []), ...(report.updated ?? [])].join(', ')}</div> : null}
          {report.problems?.length ? (
            <ul className="small">
              {report.problems.map((p) => (
                <li key={p.folder} className="text-danger">
                  {p.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function SkillRow({ skill: s, onChanged }: { skill: Skill; onChanged(): void }) {
  const toggle = useMutation(SetSkillEnabledDocument);
  const [open, setOpen] = useState(false);
  return (
    <>
      <tr data-skill={s.name}>
        <td>
          <strong>{s.name}</strong>
          <div className="small">{s.description}</div>
          {s.syncError ? (
            <div className="alert small" role="alert">
              Parse error at the last sync (the last good version stays in use): {s.syncError}
            </div>
          ) : null}
          <ErrorBox error={toggle.error} />
        </td>
        <td data-label="Min trust">
          <Badge value={s.minTrust} />
        </td>
        <td data-label="Channels">{s.channels.length ? s.channels.join(', ') : <span className="muted">all</span>}</td>
        <td data-label="Source">
          <code className="small">{s.sourceFile}</code>
          <div className="small muted">synced {fmtAgo(s.syncedAt ?? s.updatedAt)}</div>
        </td>
        <td data-label="On">
          <div className="row">
            <Switch
              checked={s.enabled}
              label={`${s.name} enabled`}
              disabled={toggle.busy}
              onChange={async (v) => {
                if (await toggle.run({ name: s.name, enabled: v })) onChanged();
              }}
            />
            <button className="small" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
              {open ? 'Hide' : 'Preview'}
            </button>
          </div>
        </td>
      </tr>
      {open ? (
        <tr>
          <td colSpan={5}>
            <div className="skill-preview" aria-label={`Preview of ${s.name}`} role="region">
              {s.readWhen ? (
                <p className="small muted">
                  <strong>Read when:</strong> {s.readWhen}
                </p>
              ) : null}
              <Markdown source={s.body} />
            </div>
          </td>
        </tr>
      ) : null}
    </>
  );
}

export function SkillsPage() {
  const q = useQuery(SkillsDocument, {});
  const { items, pager } = usePaged(q.data?.skills ?? [], 20);
  return (
    <>
      <PageHeader title="Skills" subtitle="Procedures from plugins/skills/<name>/SKILL.md, injected for senders at or above their min_trust." />
      <div className="stack">
        <Card title="Sync">
          <p className="small muted" style={{ marginTop: 0 }}>
            The skills folder is watched and synced on its own; sync now after copying files in by other means.
          </p>
          <SyncNow onDone={() => void q.refetch()} />
        </Card>
        <Card>
          <QueryView
            q={q}
            empty={(d) =>
              d.skills.length ? null : (
                <Empty title="No skills yet">
                  Create <code>plugins/skills/&lt;name&gt;/SKILL.md</code> with front matter (<code>description</code>, <code>min_trust</code>, <code>channels</code>) and the procedure below it, then press “Sync now”.
                </Empty>
              )
            }
          >
            {() => (
              <>
                <div className="table-wrap">
                  <table aria-label="Skills" className="cards">
                    <thead>
                      <tr>
                        <th>Skill</th>
                        <th>Min trust</th>
                        <th>Channels</th>
                        <th>Source</th>
                        <th>On</th>
                      </tr>
                    </thead>
                    <tbody>
                      {items.map((s) => (
                        <SkillRow key={s.id} skill={s} onChanged={() => void q.refetch()} />
                      ))}
                    </tbody>
                  </table>
                </div>
                <Pager {...pager} label="Skills" />
              </>
            )}
          </QueryView>
        </Card>
      </div>
    </>
  );
}
