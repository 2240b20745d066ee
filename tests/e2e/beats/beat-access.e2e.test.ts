/**
 * Issue 9, beats acceptance 4: a MEMBER cannot create beats (tool and GraphQL); a TRUSTED user cannot
 * touch another user's beat (GraphQL and tools); an invalid cron expression and a too-frequent schedule
 * get clear errors; a beat whose owner is demoted runs with the new trust.
 */
import { eventually, send } from '../../support/chat-helpers';
import { FakeOpenAIServer, FakeReplies, type RecordedRequest } from '../../support/fakes/fake-openai-server';
import { createUserWithToken, type TestUser } from '../../support/fixtures';
import { dataOf, type GqlResult } from '../../support/graphql-client';
import { BeatDocument, BeatsDocument, CreateBeatDocument, DeleteBeatDocument, RunBeatDocument, SetUserTrustDocument, UpdateBeatDocument } from '../../support/graphql/generated';
import { startTestApp, type TestApp } from '../../support/test-app';

function errorOf(result: GqlResult<unknown>): { code: unknown; message: string } {
  const error = result.errors?.[0];
  if (!error) throw new Error(`expected an error, got ${JSON.stringify(result.data)}`);
  return { code: error.extensions?.code, message: error.message };
}

const toolNames = (req: RecordedRequest | undefined) => ((req?.body?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name).sort();
const toolResults = (req: RecordedRequest | undefined) => (req?.body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('who may do what with beats', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let member: TestUser;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 2 } } },
        session: { summarizer_mode: 'manual' },
      },
    });
    const owner = t.client(t.ownerToken);
    member = await createUserWithToken(owner, 'MEMBER', 'member mia');
    alice = await createUserWithToken(owner, 'TRUSTED', 'trusted alice');
    bob = await createUserWithToken(owner, 'TRUSTED', 'trusted bob');
  });
  afterAll(async () => {
    await t.close();
    await model.close();
  });

  const daily = { name: 'daily', kind: 'REMINDER' as const, text: 'Water the plants', cron: '0 7 * * *', timezone: 'Europe/Berlin' };

  it('a MEMBER cannot create beats through GraphQL or the set_beat tool', async () => {
    const client = t.client(member.token);
    expect(errorOf(await client.http(CreateBeatDocument, { input: daily }))).toEqual({
      code: 'FORBIDDEN',
      message: 'Creating and changing beats needs TRUSTED trust or higher; you are MEMBER.',
    });

    model.reset();
    model.enqueue(FakeReplies.toolCalls([{ name: 'set_beat', arguments: { name: 'sneaky', text: 'hi', cron: '0 7 * * *' } }]), FakeReplies.text('I could not.'));
    await send(client, 'remind me every morning');
    const followUp = await eventually(() => model.chatRequests()[1], 20_000, 'the follow-up model call');
    // Not offered to a MEMBER, and refused where it runs when the model calls it anyway.
    expect(toolNames(model.chatRequests()[0])).not.toContain('set_beat');
    expect(toolResults(followUp)).toEqual(['Refused: the tool "set_beat" needs TRUSTED trust; the sender is MEMBER.']);
    expect(dataOf(await client.http(BeatsDocument, {})).beats).toEqual([]);
  });

  it('a TRUSTED user cannot touch another user\'s beat', async () => {
    const a = t.client(alice.token);
    const b = t.client(bob.token);
    const beat = dataOf(await a.http(CreateBeatDocument, { input: daily })).createBeat;
    expect(beat).toMatchObject({ userId: alice.id, managed: false, enabled: true, cron: '0 7 * * *' });

    const forbidden = { code: 'FORBIDDEN', message: 'You may only run or change your own beats; ADMIN trust is needed for the beats of others.' };
    expect(errorOf(await b.http(UpdateBeatDocument, { id: beat.id, input: { text: 'hacked' } }))).toEqual(forbidden);
    expect(errorOf(await b.http(DeleteBeatDocument, { id: beat.id }))).toEqual(forbidden);
    expect(errorOf(await b.http(RunBeatDocument, { id: beat.id }))).toEqual(forbidden);
    expect(errorOf(await b.http(BeatDocument, { id: beat.id })).code).toBe('NOT_FOUND');
    expect(dataOf(await b.http(BeatsDocument, {})).beats).toEqual([]);

    model.reset();
    model.enqueue(FakeReplies.toolCalls([{ name: 'update_beat', arguments: { beat: beat.id, text: 'hacked' } }]), FakeReplies.text('Done.'));
    await send(b, "change alice's beat");
    const followUp = await eventually(() => model.chatRequests()[1], 20_000, 'the follow-up model call');
    expect(toolNames(model.chatRequests()[0])).toEqual(expect.arrayContaining(['set_beat', 'list_beats', 'update_beat', 'delete_beat']));
    expect(toolResults(followUp)).toEqual([`Refused: ${forbidden.message}`]);

    // Alice's beat is as it was; an ADMIN may change it.
    expect(dataOf(await a.http(BeatDocument, { id: beat.id })).beat.text).toBe('Water the plants');
    const owner = t.client(t.ownerToken);
    expect(dataOf(await owner.http(UpdateBeatDocument, { id: beat.id, input: { text: 'Water the plants twice' } })).updateBeat.text).toBe('Water the plants twice');
  });

  it('an invalid cron expression and a too-frequent schedule get errors that say how to fix them', async () => {
    const a = t.client(alice.token);
    const bad = errorOf(await a.http(CreateBeatDocument, { input: { ...daily, name: 'bad', cron: '61 * * * *' } }));
    expect(bad.code).toBe('BAD_USER_INPUT');
    expect(bad.message).toMatch(/^Invalid cron expression "61 \* \* \* \*": .*61.*Use 5 fields "minute hour day-of-month month day-of-week" \(e\.g\. "0 7 \* \* \*"/);
    const short = errorOf(await a.http(CreateBeatDocument, { input: { ...daily, name: 'short', cron: '0 7 * *' } }));
    expect(short).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(short.message).toMatch(/has 4 field\(s\)\. Use 5 fields/);
    const zone = errorOf(await a.http(CreateBeatDocument, { input: { ...daily, name: 'zone', timezone: 'Berlin' } }));
    expect(zone.message).toBe('Unknown time zone "Berlin". Use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York".');

    const often = errorOf(await a.http(CreateBeatDocument, { input: { ...daily, name: 'often', cron: '*/2 * * * *' } }));
    expect(often).toEqual({
      code: 'BAD_USER_INPUT',
      message: 'The schedule "*/2 * * * *" runs every 2 min; beats may run at most every 5 minutes below ADMIN. Use e.g. "*/5 * * * *" or a less frequent schedule.',
    });
    const beat = dataOf(await a.http(BeatsDocument, {})).beats.find((x) => x.name === 'daily')!;
    expect(errorOf(await a.http(UpdateBeatDocument, { id: beat.id, input: { cron: '* * * * * *' } })).message).toMatch(/runs every 1 s; beats may run at most every 5 minutes below ADMIN/);
    expect(dataOf(await a.http(CreateBeatDocument, { input: { ...daily, name: 'five', cron: '*/5 * * * *' } })).createBeat.nextRuns).toHaveLength(5);
    // ADMIN and above are not held to the floor.
    const owner = t.client(t.ownerToken);
    expect(dataOf(await owner.http(CreateBeatDocument, { input: { ...daily, name: 'often', cron: '*/2 * * * *', enabled: false } })).createBeat.enabled).toBe(false);
  });

  it('a beat whose owner is demoted runs with the new trust', async () => {
    const owner = t.client(t.ownerToken);
    const carol = await createUserWithToken(owner, 'TRUSTED', 'trusted carol');
    const c = t.client(carol.token);
    await send(c, '/whoami'); // her web session: the principal chat the result goes to
    const beat = dataOf(await c.http(CreateBeatDocument, { input: { name: 'check', kind: 'TASK', text: 'Check the garden sensors', cron: '0 6 * * *' } })).createBeat;

    model.reset();
    model.enqueue(FakeReplies.text('All sensors fine.'));
    const first = dataOf(await c.http(RunBeatDocument, { id: beat.id })).runBeat;
    expect(first).toMatchObject({ status: 'OK', trigger: 'MANUAL', output: 'All sensors fine.' });
    const trusted = model.chatRequests()[0]!;
    expect(toolNames(trusted)).toContain('send_message');
    expect(toolNames(trusted)).not.toContain('set_beat'); // no beat tools inside a beat run
    expect(JSON.stringify(trusted.body?.messages)).toContain('(trust TRUSTED)');

    dataOf(await owner.http(SetUserTrustDocument, { userId: carol.id, trust: 'MEMBER' }));
    // A MEMBER may no longer run it herself …
    expect(errorOf(await c.http(RunBeatDocument, { id: beat.id })).code).toBe('FORBIDDEN');
    // … but it still runs, with her new trust: fewer tools, and a TRUSTED tool is refused where it runs.
    model.reset();
    model.enqueue(FakeReplies.toolCalls([{ name: 'send_message', arguments: { text: 'hi', user_id: carol.id } }]), FakeReplies.text('Could not send.'));
    const second = dataOf(await owner.http(RunBeatDocument, { id: beat.id })).runBeat;
    expect(second).toMatchObject({ status: 'OK', output: 'Could not send.' });
    const [asked, answered] = model.chatRequests();
    expect(toolNames(asked)).not.toContain('send_message');
    expect(JSON.stringify(asked!.body?.messages)).toContain('(trust MEMBER)');
    expect(toolResults(answered)).toEqual(['Refused: the tool "send_message" needs TRUSTED trust; the sender is MEMBER.']);
  });
});
