import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer, FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf, type GraphQLTestClient } from '../../support/graphql-client';
import { LinkIdentityDocument } from '../../support/graphql/generated';
import { lastUserText } from '../pipeline/pipeline-helpers';

const SKILLS = /* GraphQL */ `
  query Skills { skills { name description readWhen minTrust channels enabled body } }
`;
const SET_ENABLED = /* GraphQL */ `
  mutation SetSkillEnabled($name: String!, $enabled: Boolean!) { setSkillEnabled(name: $name, enabled: $enabled) { name enabled } }
`;
const SET_PLUGIN = /* GraphQL */ `
  mutation SetPlugin($input: PluginSettingInput!) { setPluginSetting(input: $input) { plugin channel enabled } }
`;
const SYNC = /* GraphQL */ `
  mutation SyncSkills { syncSkills { jobId queue } }
`;
const JOB_PROGRESS = /* GraphQL */ `
  subscription JobProgress($jobId: ID!) { jobProgress(jobId: $jobId) { jobId queue state percent progress result error } }
`;

interface SkillRow {
  name: string;
  minTrust: string;
  channels: string[];
  enabled: boolean;
  body: string;
}

function skillFile(front: Record<string, string>, body: string): string {
  return `---\n${Object.entries(front).map(([k, v]) => `${k}: ${v}`).join('\n')}\n---\n${body}\n`;
}

/** The system prompt of the model request that answered `text`. */
function systemPromptFor(model: FakeOpenAIServer, text: string): string | undefined {
  const req = model.chatRequests().find((r: RecordedRequest) => lastUserText(r).includes(text));
  const system = req?.body?.messages?.find((m) => m.role === 'system')?.content;
  return typeof system === 'string' ? system : undefined;
}

/**
 * Issue 9, acceptance 5: SKILL.md files are synced into `skills` (also while running), injected for the
 * senders and channels they are meant for, listed by /skills, loaded by /skill in manual mode, and a
 * switched-off skill is gone from the next prompt.
 */
describe('skills end to end', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let owner: GraphQLTestClient;
  let member: GraphQLTestClient;
  let trusted: GraphQLTestClient;
  let trustedId: string;
  let dataDir: string;
  let skillsDir: string;
  let n = 0;

  const write = (name: string, content: string) => {
    mkdirSync(path.join(skillsDir, name), { recursive: true });
    writeFileSync(path.join(skillsDir, name, 'SKILL.md'), content);
  };
  const skills = async () => dataOf(await owner.http<{ skills: SkillRow[] }, unknown>(SKILLS)).skills;
  /** Sends `text` (made unique) and resolves with the system prompt the model got for it. */
  const promptOf = async (client: GraphQLTestClient, text: string): Promise<string> => {
    const unique = `${text} #${++n}`;
    await send(client, unique);
    return eventually(() => systemPromptFor(model, unique), 15_000, `the model request for "${unique}"`);
  };
  /** The same through the Telegram inbound pipeline, as the TRUSTED user's linked identity. */
  const telegramPromptOf = async (text: string): Promise<string> => {
    const unique = `${text} #${++n}`;
    await t.app.chat!.pipeline.handle({
      channel: 'telegram',
      chatId: 'tg-trusted',
      chatKind: 'dm',
      sender: { handle: 'tg-trusted', displayName: 'Trusted' },
      text: unique,
      platformMessageId: `m-${n}`,
    });
    return eventually(() => systemPromptFor(model, unique), 15_000, `the model request for "${unique}"`);
  };

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => FakeReplies.text(`Echo: ${lastUserText(req)}`));
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'muninn-skills-'));
    skillsDir = path.join(dataDir, 'skills');
    write('everyone', skillFile({ description: 'For every member', read_when: 'always' }, 'BODY-EVERYONE: greet warmly.'));
    write('broken', 'no front matter here');
    t = await startTestApp({
      dataDir,
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        skills: { dir: skillsDir, watch_debounce_ms: 50 },
        log: { level: 'warn' },
      },
    });
    owner = t.client(t.ownerToken);
    member = t.client((await createUserWithToken(owner, 'Member', 'MEMBER')).token);
    const tu = await createUserWithToken(owner, 'Trusted', 'TRUSTED');
    trustedId = tu.id;
    trusted = t.client(tu.token);
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: trustedId, channel: 'telegram', handle: 'tg-trusted' } }));
  }, 60_000);

  afterAll(async () => {
    for (const c of [owner, member, trusted]) await c?.close();
    await t?.close();
    await model?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('syncs the folder at start; a broken file is reported and the rest still load', async () => {
    const rows = await skills();
    expect(rows.map((s) => [s.name, s.minTrust, s.channels, s.enabled])).toEqual([['everyone', 'MEMBER', [], true]]);
    expect(rows[0]!.body).toBe('BODY-EVERYONE: greet warmly.');
    const warning = t.logs.entries().find((e) => String(e.msg).startsWith('skill not loaded'));
    expect(String(warning?.msg)).toContain(`${path.join('broken', 'SKILL.md')}: no front matter`);
  });

  it('a new SKILL.md shows in `skills` within 3 s', async () => {
    write('trusted-only', skillFile({ description: 'For trusted people', min_trust: 'TRUSTED' }, 'BODY-TRUSTED: use the secret recipe.'));
    write('telegram-only', skillFile({ description: 'Only in Telegram', channels: '[telegram]' }, 'BODY-TELEGRAM: use short lines.'));
    const rows = await eventually(async () => {
      const list = await skills();
      return list.length === 3 ? list : undefined;
    }, 3_000, 'the new skills');
    expect(rows.map((s) => [s.name, s.minTrust, s.channels])).toEqual([
      ['everyone', 'MEMBER', []],
      ['telegram-only', 'MEMBER', ['telegram']],
      ['trusted-only', 'TRUSTED', []],
    ]);
  });

  it('a min_trust TRUSTED skill reaches the prompt of a TRUSTED sender, not of a MEMBER', async () => {
    const forTrusted = await promptOf(trusted, 'hello from trusted');
    expect(forTrusted).toContain('BODY-TRUSTED: use the secret recipe.');
    expect(forTrusted).toContain('BODY-EVERYONE');
    const forMember = await promptOf(member, 'hello from member');
    expect(forMember).toContain('BODY-EVERYONE');
    expect(forMember).not.toContain('BODY-TRUSTED');
    expect(forMember).not.toContain('trusted-only');
  });

  it('channels: [telegram] keeps a skill off the web and in Telegram', async () => {
    expect(await promptOf(trusted, 'web message')).not.toContain('BODY-TELEGRAM');
    const telegram = await telegramPromptOf('telegram message');
    expect(telegram).toContain('BODY-TELEGRAM: use short lines.');
    expect(telegram).toContain('BODY-TRUSTED');
  });

  it('/skills lists what this sender may use on this channel', async () => {
    expect((await send(member, '/skills')).reply).toMatch(/^Skills you may use here:\n• everyone — For every member\n/);
    const forTrusted = (await send(trusted, '/skills')).reply!;
    expect(forTrusted).toContain('• trusted-only — For trusted people');
    expect(forTrusted).not.toContain('telegram-only');
  });

  it('disabling a skill removes it from the very next prompt; enabling brings it back', async () => {
    expect(dataOf(await owner.http(SET_ENABLED, { name: 'trusted-only', enabled: false }))).toEqual({ setSkillEnabled: { name: 'trusted-only', enabled: false } });
    expect(await promptOf(trusted, 'after disabling')).not.toContain('BODY-TRUSTED');
    expect((await send(trusted, '/skills')).reply).not.toContain('trusted-only');
    dataOf(await owner.http(SET_ENABLED, { name: 'trusted-only', enabled: true }));
    expect(await promptOf(trusted, 'after enabling')).toContain('BODY-TRUSTED');
  });

  it('a plugin setting switches a skill off on one channel only', async () => {
    dataOf(await owner.http(SET_PLUGIN, { input: { plugin: 'skill:everyone', channel: 'web', enabled: false } }));
    expect(await promptOf(trusted, 'web without everyone')).not.toContain('BODY-EVERYONE');
    expect(await telegramPromptOf('telegram with everyone')).toContain('BODY-EVERYONE');
    dataOf(await owner.http(SET_PLUGIN, { input: { plugin: 'skill:everyone', channel: 'web', enabled: true } }));
  });

  it('setSkillEnabled is for ADMINs; an unknown skill is NOT_FOUND', async () => {
    const denied = await member.http(SET_ENABLED, { name: 'everyone', enabled: false });
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const missing = await owner.http(SET_ENABLED, { name: 'nope', enabled: false });
    expect(missing.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('manual mode lists the skills; /skill <name> loads one for the next turn only', async () => {
    t.config.skills.mode = 'manual';
    try {
      const listed = await promptOf(trusted, 'manual listing');
      expect(listed).toContain('### trusted-only');
      expect(listed).toContain('/skill trusted-only');
      expect(listed).not.toContain('BODY-TRUSTED');
      expect((await send(trusted, '/skill trusted-only')).reply).toBe('Skill "trusted-only" is loaded for your next message.');
      expect(await promptOf(trusted, 'with the skill')).toContain('BODY-TRUSTED: use the secret recipe.');
      expect(await promptOf(trusted, 'the turn after')).not.toContain('BODY-TRUSTED');
      expect((await send(member, '/skill trusted-only')).reply).toContain('No skill "trusted-only" is available to you here.');
    } finally {
      t.config.skills.mode = 'auto';
    }
  });

  it('syncSkills runs as a job whose progress jobProgress streams; a removed folder is gone', async () => {
    rmSync(path.join(skillsDir, 'telegram-only'), { recursive: true, force: true });
    const { jobId, queue } = dataOf(await owner.http<{ syncSkills: { jobId: string; queue: string } }, unknown>(SYNC)).syncSkills;
    expect(queue).toBe('skills');
    const updates: Array<{ state: string; percent: number | null; result: unknown }> = [];
    await new Promise<void>((resolve, reject) => {
      owner.wsClient().subscribe<{ jobProgress: (typeof updates)[number] }>(
        { query: JOB_PROGRESS, variables: { jobId } },
        { next: (v) => (v.errors ? reject(new Error(JSON.stringify(v.errors))) : updates.push(v.data!.jobProgress)), error: reject, complete: resolve },
      );
    });
    const last = updates.at(-1)!;
    expect(last.state).toBe('COMPLETED');
    expect(last.percent).toBe(100);
    // The watcher may have removed it first; either way the job saw a consistent folder.
    expect(last.result).toMatchObject({ added: [], problems: [{ folder: 'broken' }] });
    expect((await skills()).map((s) => s.name)).toEqual(['everyone', 'trusted-only']);
    const denied = await member.http(SYNC);
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});
