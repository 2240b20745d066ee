/**
 * Security suite, flood: one GUEST fires a thousand messages as fast as the pipeline takes them; it is
 * rate-limited (at most `guest_messages_per_minute` accepted, one notice), while another user's turns
 * all complete. The p99 of that user's turn time with and without the flood is printed as a figure (no
 * timing assertion). Pairing requests from a flood of strangers are capped (3 pending per channel, one
 * code per sender), and guessed codes approve nothing.
 */
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { createUserWithToken, eventually, send } from '../../support/chat-helpers';
import { dataOf } from '../../support/graphql-client';
import { CreateUserDocument, LinkIdentityDocument } from '../../support/graphql/generated';
import { Message, MessageRole } from '../../../server/modules/sessions';
import { PAIRING_CODE_ALPHABET, PAIRING_CODE_LENGTH, PairingRequest } from '../../../server/modules/pairing';
import { lastUserText, registerRecorderChannel } from '../pipeline/pipeline-helpers';
import { reportFigures } from '../fault/fault-kit';

const FLOOD = 1000;
const TURNS = 10;
const PER_MINUTE = 5;

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

describe('flood', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, delayMs: 20 }));
    recorder = await ChatRecorderServer.start();
    t = await startTestApp({
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 4 } } },
        channels: { telegram: { dm_policy: 'open', guest_messages_per_minute: PER_MINUTE }, whatsapp: { dm_policy: 'pairing' } },
        log: { level: 'warn' },
      },
    });
    await registerRecorderChannel(t, 'telegram', recorder);
    await registerRecorderChannel(t, 'whatsapp', recorder);
  });

  afterAll(async () => {
    await t.close();
    await model.close();
    await recorder.close();
  });

  it(`a GUEST sending ${FLOOD} messages is rate-limited while another user's turns all complete`, async () => {
    const owner = t.client(t.ownerToken);
    const member = await createUserWithToken(owner, 'busy member', 'MEMBER');
    const guestId = dataOf(await owner.http(CreateUserDocument, { input: { displayName: 'flooder', trust: 'GUEST' } })).createUser.id;
    dataOf(await owner.http(LinkIdentityDocument, { input: { userId: guestId, channel: 'telegram', handle: 'tg-flooder' } }));
    await owner.close();
    const client = t.client(member.token);
    const repo = t.app.db.repo(t.app.systemCtx('test'), Message);
    const turn = async (text: string): Promise<number> => {
      const started = performance.now();
      const sent = await send(client, text);
      await eventually(async () => (await repo.findBy({ replyToId: sent.messageId!, role: MessageRole.ASSISTANT })).length > 0, 30_000, `reply to ${text}`);
      return performance.now() - started;
    };
    const unloaded: number[] = [];
    for (let i = 0; i < TURNS; i++) unloaded.push(await turn(`quiet ${i}`));

    let accepted = 0;
    let notices = 0;
    let silent = 0;
    const flood = (async () => {
      for (let i = 0; i < FLOOD; i++) {
        const handled = await t.app.chat!.pipeline.handle({ channel: 'telegram', chatId: 'tg-flooder', chatKind: 'dm', sender: { handle: 'tg-flooder' }, text: `flood ${i}`, platformMessageId: `flood-${i}` });
        if (handled.ticket) accepted++;
        else if (handled.replies.length) notices++;
        else silent++;
      }
    })();
    const loaded: number[] = [];
    for (let i = 0; i < TURNS; i++) loaded.push(await turn(`busy ${i}`));
    await flood;
    await client.close();

    const guestSessions = await repo.findBy({ role: MessageRole.USER, userId: guestId });
    reportFigures('security-suite', 'flood', {
      floodMessages: FLOOD,
      guestAccepted: accepted,
      guestNotices: notices,
      guestSilentlyDropped: silent,
      guestStored: guestSessions.length,
      otherUserTurns: loaded.length,
      p99UnloadedMs: Math.round(p99(unloaded)),
      p99LoadedMs: Math.round(p99(loaded)),
      p99Ratio: Number((p99(loaded) / p99(unloaded)).toFixed(2)),
    });
    expect(accepted).toBeLessThanOrEqual(PER_MINUTE);
    expect(accepted).toBeGreaterThan(0);
    expect(notices).toBe(1);
    expect(accepted + notices + silent).toBe(FLOOD);
    expect(guestSessions.length).toBe(accepted);
    expect(loaded).toHaveLength(TURNS);
  }, 180_000);

  it('a flood of strangers asking to pair is capped, and guessed codes approve nobody', async () => {
    const replies: string[] = [];
    for (let i = 0; i < 40; i++) {
      const handled = await t.app.chat!.pipeline.handle({ channel: 'whatsapp', chatId: `stranger-${i}`, chatKind: 'dm', sender: { handle: `stranger-${i}` }, text: 'let me in', platformMessageId: `pair-${i}` });
      replies.push(handled.replies.join(' '));
    }
    // The same stranger again: the same code, no new request.
    await t.app.chat!.pipeline.handle({ channel: 'whatsapp', chatId: 'stranger-0', chatKind: 'dm', sender: { handle: 'stranger-0' }, text: 'again', platformMessageId: 'pair-again' });
    const requests = await t.app.db.repo(t.app.systemCtx('test'), PairingRequest).find();
    const owner = t.client(t.ownerToken);
    let guessedOk = 0;
    const codes = new Set(requests.map((r) => r.code));
    const alphabet = PAIRING_CODE_ALPHABET;
    for (let i = 0; i < 200; i++) {
      let guess = '';
      for (let k = 0; k < PAIRING_CODE_LENGTH; k++) guess += alphabet[(i * 7 + k * 13 + k * i) % alphabet.length];
      if (codes.has(guess)) continue;
      const res = await owner.http<unknown, unknown>('mutation A($code: String!) { approvePairing(code: $code) { id } }', { code: guess });
      if (!res.errors) guessedOk++;
      else expect(['NOT_FOUND', 'BAD_USER_INPUT']).toContain(res.errors[0]!.extensions?.code);
    }
    await owner.close();
    reportFigures('security-suite', 'pairing-flood', { strangers: 40, requestsStored: requests.length, pending: requests.filter((r) => r.status === 'PENDING').length, guessedCodes: 200, guessedApproved: guessedOk });
    expect(requests.filter((r) => r.status === 'PENDING').length).toBeLessThanOrEqual(3);
    expect(guessedOk).toBe(0);
  }, 120_000);
});
