import { randomUUID } from 'node:crypto';
import type { ToolCall } from '../models';

/**
 * Models without native tool calling may answer with a JSON block `{"tool_calls":[{"name":…,
 * "arguments":{…}}]}` in their text (fenced or bare). Returns the calls and the text without the block,
 * or null when there is no such block.
 */
export function parseTextToolCalls(text: string): { calls: ToolCall[]; rest: string } | null {
  if (!text.includes('tool_calls')) return null;
  const candidates: Array<{ json: string; start: number; end: number }> = [];
  const fence = /```(?:json)?\s*([\s\S]*?)```/g;
  for (let m = fence.exec(text); m; m = fence.exec(text)) candidates.push({ json: m[1]!, start: m.index, end: m.index + m[0].length });
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) candidates.push({ json: text.slice(first, last + 1), start: first, end: last + 1 });
  for (const c of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(c.json);
    } catch {
      continue;
    }
    const list = (parsed as { tool_calls?: unknown })?.tool_calls;
    if (!Array.isArray(list) || list.length === 0) continue;
    const calls: ToolCall[] = [];
    for (const item of list) {
      const raw = item as { id?: unknown; name?: unknown; arguments?: unknown; function?: { name?: unknown; arguments?: unknown } };
      const name = typeof raw.name === 'string' ? raw.name : typeof raw.function?.name === 'string' ? raw.function.name : null;
      if (!name) continue;
      const args = raw.arguments ?? raw.function?.arguments ?? {};
      calls.push({
        id: typeof raw.id === 'string' ? raw.id : `call_${randomUUID().slice(0, 8)}`,
        name,
        arguments: typeof args === 'string' ? args : JSON.stringify(args),
      });
    }
    if (calls.length) return { calls, rest: (text.slice(0, c.start) + text.slice(c.end)).trim() };
  }
  return null;
}
