import type { RecordedRequest } from './fakes/fake-openai-server';

// === Reading the requests the fake model recorded

/** Text of the last user message the model was shown (non-text content as JSON). */
export function lastUserText(req: RecordedRequest): string {
  const users = (req.body?.messages ?? []).filter((m) => m.role === 'user');
  const content = users[users.length - 1]?.content;
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

/** The text of the last tool message the model was shown. */
export function lastToolResult(req: RecordedRequest): string {
  const tool = [...(req.body?.messages ?? [])].reverse().find((m) => m.role === 'tool');
  return typeof tool?.content === 'string' ? tool.content : JSON.stringify(tool?.content ?? null);
}
