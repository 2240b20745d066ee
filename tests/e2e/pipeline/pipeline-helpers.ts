import { randomUUID } from 'node:crypto';
import type { RecordedRequest } from '../../support/fakes/fake-openai-server';
import { RecorderTransport, type ChatRecorderServer } from '../../support/fakes/chat-recorder';
import type { EventRecord } from '../../support/session-events';
import type { TestApp } from '../../support/test-app';

/** Same clock as the fake model's timestamps (epoch ms with sub-millisecond precision). */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

export { lastUserText } from '../../support/model-requests';

/** Tool results the model was given in this request, by tool call id. */
export function toolResults(req: RecordedRequest): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of req.body?.messages ?? []) {
    if (m.role === 'tool' && m.tool_call_id) out.set(m.tool_call_id, typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
  }
  return out;
}

/** Names of the tools offered in this request (sorted); empty when none were offered. */
export function offeredTools(req: RecordedRequest): string[] {
  return (req.body?.tools ?? []).map((t) => t.function.name).sort();
}

/** True when the request already carries tool results (the model's second step). */
export function hasToolResults(req: RecordedRequest): boolean {
  return (req.body?.messages ?? []).some((m) => m.role === 'tool');
}

/**
 * Registers a transport for a platform channel that posts what it sends to a ChatRecorderServer, and
 * starts it, so the outbound worker of a running test app can deliver to that channel.
 */
export async function registerRecorderChannel(t: TestApp, channel: string, recorder: ChatRecorderServer): Promise<void> {
  const chat = t.app.chat!;
  chat.channels.register(new RecorderTransport(channel, recorder.url));
  await chat.channels.start(channel, async () => undefined);
}

/** The approval id announced in an "Approval needed" notice. */
export function approvalIdOf(notice: EventRecord): string {
  const match = /\/approve (\S+) allow_once\|allow_always\|deny/.exec(String(notice.text));
  if (!match) throw new Error(`not an approval notice: ${String(notice.text)}`);
  return match[1]!;
}

export function isApprovalNotice(e: EventRecord): boolean {
  return e.__typename === 'Notice' && /^Approval needed for /.test(String(e.text));
}

/**
 * Hands a marker notice to a platform chat and waits until the recorder got it; returns the texts the
 * chat got before it. A chat's mailbox is served in order, so whatever was handed over for the chat
 * earlier (a second copy, a retry) has arrived by then: no need to wait and see.
 */
export async function fenceChat(t: TestApp, recorder: ChatRecorderServer, channel: string, chatId: string): Promise<string[]> {
  const marker = `fence ${randomUUID()}`;
  await t.app.chat!.delivery.notify(t.app.systemCtx('fence'), { channel, chatId, key: `fence:${marker}` }, marker);
  const deadline = Date.now() + 10_000;
  for (;;) {
    const chat = recorder.chunks.filter((c) => c.chatId === chatId);
    const at = chat.findIndex((c) => c.text === marker);
    if (at >= 0) return chat.slice(0, at).map((c) => c.text);
    if (Date.now() > deadline) throw new Error(`timed out waiting for the fence in ${channel}:${chatId}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
