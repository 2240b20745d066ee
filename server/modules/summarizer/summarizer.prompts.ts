import { estimateTokens, type ChatMessage } from '../models';
import type { Message } from '../sessions';
import { MessageRole } from '../sessions';
import { SUMMARY_SECTIONS } from './structured-summary';

// === Prompts of the summarizer role (memory extraction, compaction summary)

export const EXTRACT_MEMORIES_PROMPT = [
  'You maintain the long-term memory of an AI assistant. From the conversation you are given, extract only what is worth remembering in later conversations:',
  '- "fact": a durable fact about the people in the conversation, their projects, preferences, environment or plans (e.g. "Prefers short answers in German", "The Falcon project deadline is 2026-03-01").',
  '- "lesson": something learned about how to help them (a correction, a style or tool preference, an approach that did not work).',
  '- "reminder": something they want to be reminded of or followed up on, with its date or time when given.',
  'Skip small talk, one-off questions, things already settled in the conversation, and secrets (passwords, tokens, keys).',
  'Write each memory as one self-contained sentence in the language of the conversation, naming who it is about. Rate importance from 0 to 1.',
  'Answer with JSON only, no prose: {"memories":[{"type":"fact","content":"…","importance":0.7}]}. Answer {"memories":[]} when nothing is worth keeping.',
].join('\n');

export function compactionPrompt(instructions: string | null): string {
  const lines = [
    'You compact a conversation between a user and an AI assistant so that it can continue in a new session without losing context.',
    'Write a summary with exactly these five Markdown sections, in this order, each as bullet points ("- none" when empty):',
    ...SUMMARY_SECTIONS.map((s) => `## ${s}`),
    'Decisions: what was decided or agreed. Open tasks: work started or promised but not finished. Constraints: requirements, limits and preferences that must keep applying. Pending asks: questions or requests not yet answered. Exact identifiers: names, numbers, dates, file paths, URLs, ids, commands and code identifiers, copied exactly.',
    'Keep every identifier exactly as written. Be concise; do not add anything that is not in the conversation. Answer with the summary only.',
  ];
  if (instructions?.trim()) lines.push(`The user asked for this compaction with these instructions (follow them): ${instructions.trim()}`);
  return lines.join('\n');
}

export interface TranscriptOptions {
  /** userId → display name, for labelling user messages. */
  names: Map<string, string>;
  /** messageId → number of image attachments. */
  images?: Map<string, number>;
  /** Keep the most recent messages within this many tokens. */
  budgetTokens: number;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function toolCallsText(calls: unknown): string {
  if (!Array.isArray(calls)) return '';
  return calls
    .map((c: { name?: unknown; arguments?: unknown }) => `${String(c?.name ?? 'tool')}(${clip(typeof c?.arguments === 'string' ? c.arguments : JSON.stringify(c?.arguments ?? {}), 200)})`)
    .join(', ');
}

function lineOf(m: Message, opts: TranscriptOptions): string {
  switch (m.role) {
    case MessageRole.USER: {
      const who = (m.userId && opts.names.get(m.userId)) || 'user';
      const count = opts.images?.get(m.id) ?? 0;
      return `[${who}] ${clip(m.content, 6000)}${count ? ` [${count} image(s) attached]` : ''}`;
    }
    case MessageRole.ASSISTANT: {
      const calls = toolCallsText(m.toolCalls);
      return calls ? `[assistant calls ${calls}]${m.content.trim() ? ` ${clip(m.content, 2000)}` : ''}` : `[assistant] ${clip(m.content, 6000)}`;
    }
    case MessageRole.TOOL:
      return `[tool result] ${clip(m.content, 800)}`;
    case MessageRole.SYSTEM:
      return `[summary of what came before]\n${m.content}`;
  }
}

/** The conversation as labelled lines, oldest first, keeping the most recent part within the token budget. */
export function renderTranscript(messages: Message[], opts: TranscriptOptions): string {
  const lines: string[] = [];
  let tokens = 0;
  let left = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const line = lineOf(messages[i]!, opts);
    const cost = estimateTokens(line) + 2;
    if (lines.length && tokens + cost > opts.budgetTokens) {
      left = i + 1;
      break;
    }
    lines.push(line);
    tokens += cost;
  }
  lines.reverse();
  if (left) lines.unshift(`[… ${left} earlier message(s) left out …]`);
  return lines.join('\n\n');
}

/** The summarizer call: instructions as the system message, the transcript as the user message. */
export function summarizerMessages(system: string, intro: string, transcript: string): ChatMessage[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: `${intro}\n\n<conversation>\n${transcript}\n</conversation>` },
  ];
}
