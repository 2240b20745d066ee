/**
 * Fault suite: the worker process is killed with SIGKILL again and again while hundreds of messages over
 * many sessions are in flight. Every accepted message gets exactly one reply, in order per session; no
 * chunk reaches the (fake) platform twice; nothing is left QUEUED or PROCESSING.
 */
import type { ChildProcess } from 'node:child_process';
import { startTestApp, type TestApp } from '../../support/test-app';
import { FakeOpenAIServer } from '../../support/fakes/fake-openai-server';
import { ChatRecorderServer } from '../../support/fakes/chat-recorder';
import { eventually } from '../../support/chat-helpers';
import { killHard, spawnWorker } from '../../support/worker-spawn';
import { TrustLevel } from '../../../server/common/trust';
import { checkReplies, queuesIdle, reportFigures, sentMarksWritten } from './fault-kit';
import { lastUserText } from '../pipeline/pipeline-helpers';

const SESSIONS = Number(process.env.FAULT_SESSIONS ?? 20);
const PER_SESSION = Number(process.env.FAULT_PER_SESSION ?? 25);
const KILLS = Number(process.env.FAULT_KILLS ?? 20);
const trace = (...a: unknown[]) => process.env.FAULT_TRACE && console.log(new Date().toISOString(), ...a);

describe('fault: worker SIGKILLed repeatedly under load', () => {
  let t: TestApp;
  let model: FakeOpenAIServer;
  let recorder: ChatRecorderServer;
  let worker: ChildProcess | null = null;

  beforeAll(async () => {
    model = await FakeOpenAIServer.start();
    model.setDefault((req) => ({ text: `Reply to ${lastUserText(req)}`, delayMs: 40, chunks: 2, chunkDelayMs: 20 }));
    recorder = await ChatRecorderServer.start();
    t = await startTestApp({
      workers: false,
      config: {
        ai: { providers: { fake: { base_url: model.baseUrl, model: 'fake-model', max_concurrency: 8 } }, max_retries: 5 },
        queues: { turn_lock_ms: 2000, stalled_interval_ms: 1000 },
        log: { level: 'warn' },
      },
    });
  });

  afterAll(async () => {
    if (worker) await killHard(worker);
    await t.close();
    await model.close();
    await recorder.close();
  });

  it(`${SESSIONS * PER_SESSION} messages over ${SESSIONS} sessions, ${KILLS} SIGKILLs: exactly one reply each, in order`, async () => {
    const started = Date.now();
    const ctx = t.app.systemCtx('test');
    for (let c = 0; c < SESSIONS; c++) {
      const user = await t.app.services.users.create(ctx, { displayName: `tg user ${c}`, trust: TrustLevel.MEMBER });
      await t.app.services.users.linkIdentity(ctx, user.id, 'telegram', `tg${c}`);
    }
    const accepted = new Map<string, string[]>();
    const pipeline = t.app.chat!.pipeline;
    for (let m = 0; m < PER_SESSION; m++) {
      for (let c = 0; c < SESSIONS; c++) {
        const handled = await pipeline.handle({ channel: 'telegram', chatId: `chat${c}`, chatKind: 'dm', sender: { handle: `tg${c}` }, text: `c${c}-m${m}`, platformMessageId: `${c}-${m}` });
        expect(handled.ticket?.status).toBe('QUEUED');
        const list = accepted.get(handled.session!.id) ?? [];
        list.push(handled.ticket!.messageId);
        accepted.set(handled.session!.id, list);
      }
    }
    const total = SESSIONS * PER_SESSION;
    trace('submitted', total);
    let kills = 0;
    worker = await spawnWorker(t.config, recorder.url);
    while (kills < KILLS && recorder.chunks.length < total) {
      const before = recorder.chunks.length;
      // Let the new worker get some replies out (it has reclaimed its dead predecessor's work), then kill it
      // with model calls in flight. The platform holds its answers for a moment first, so no chunk is
      // accepted in the instant between the platform's answer and the worker marking it sent (the one
      // at-least-once window the README names).
      await eventually(() => recorder.chunks.length >= Math.min(total, before + 4) || recorder.chunks.length >= total, 30_000, `progress after restart ${kills}`);
      recorder.hold();
      // The worker has taken note of every chunk the platform answered before the hold (on a loaded
      // machine that can take longer than any fixed pause), so a kill now is outside that window.
      await sentMarksWritten(t, recorder.chunks.map((c) => c.key));
      await new Promise((r) => setTimeout(r, 50));
      await killHard(worker);
      kills++;
      trace('killed', kills, 'delivered', recorder.chunks.length);
      worker = await spawnWorker(t.config, recorder.url);
      // Released once the new worker runs: by then the platform has seen the dead worker's connections
      // close, so nothing it sent while held is taken.
      recorder.release();
      trace('restarted');
    }
    await eventually(() => recorder.chunks.length >= total, 90_000, 'every reply delivered');
    const check = await eventually(async () => {
      const c = await checkReplies(t, accepted);
      return c.answered === total && c.stuck === 0 ? c : undefined;
    }, 30_000, 'every reply stored');
    // Every job done (a duplicate delivery would still be queued or running otherwise).
    await queuesIdle(t);
    const keys = recorder.chunks.map((c) => c.key);
    const platformDuplicates = keys.length - new Set(keys).size;
    let platformOutOfOrder = 0;
    for (let c = 0; c < SESSIONS; c++) {
      const texts = recorder.chunks.filter((ch) => ch.chatId === `chat${c}`).map((ch) => ch.text);
      if (JSON.stringify(texts) !== JSON.stringify(Array.from({ length: PER_SESSION }, (_, m) => `Reply to c${c}-m${m}`))) platformOutOfOrder++;
    }
    reportFigures('fault-suite', 'worker-sigkill', {
      sessions: SESSIONS,
      messages: total,
      kills,
      ...check,
      delivered: recorder.chunks.length,
      platformDuplicates,
      platformOutOfOrder,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    expect(kills).toBe(KILLS);
    expect(check).toMatchObject({ accepted: total, answered: total, lost: 0, duplicated: 0, stuck: 0, notDone: 0, outOfOrder: 0 });
    expect(platformDuplicates).toBe(0);
    expect(platformOutOfOrder).toBe(0);
    expect(recorder.chunks).toHaveLength(total);
  }, 420_000);
});
