import type { ChatMessage, ToolSpec } from '../models';
import type { RecalledMemory, SkillText } from './agent.ports';

export interface PromptInput {
  systemPrompt: string;
  tools: ToolSpec[];
  /** The model calls tools natively; otherwise the tool contract asks for a JSON block in text. */
  nativeTools: boolean;
  skills: SkillText[];
  memories: RecalledMemory[];
  /** Who is talking, where, and when (the prompt prefix). */
  context: string[];
  /** Conversation so far, oldest first, ending with the current turn's messages. */
  history: ChatMessage[];
  /** How many of the last history messages belong to the running turn and are never dropped. */
  pinnedTail: number;
  /** Token budget for the whole prompt. */
  budgetTokens: number;
  estimate: (messages: ChatMessage[]) => number;
}

export interface BuiltPrompt {
  messages: ChatMessage[];
  estimatedTokens: number;
  droppedMessages: number;
}

function toolContract(tools: ToolSpec[], native: boolean): string {
  if (!tools.length) return 'You have no tools in this conversation; answer from what you know.';
  const lines = ['## Tools', 'You may call these tools. Call one only when it helps; results come back to you before you answer.'];
  if (!native) {
    lines.push(
      'To call tools, answer with only this JSON and nothing else:',
      '{"tool_calls":[{"name":"<tool>","arguments":{…}}]}',
    );
  }
  for (const t of tools) {
    lines.push(`- ${t.name}: ${t.description}${native ? '' : ` Arguments (JSON schema): ${JSON.stringify(t.parameters)}`}`);
  }
  return lines.join('\n');
}

/**
 * Assembles the prompt in the order of DESIGN §2.4: system prompt → tool contract → tool schemas →
 * skills → recalled memories → history. When over budget, the oldest history goes first; the system
 * part and the running turn's messages always stay.
 */
export function buildPrompt(input: PromptInput): BuiltPrompt {
  const parts = [input.systemPrompt.trim(), toolContract(input.tools, input.nativeTools)];
  if (input.skills.length) {
    parts.push(['## Skills', ...input.skills.map((s) => `### ${s.name}\n${s.description}\n\n${s.body.trim()}`)].join('\n'));
  }
  if (input.memories.length) {
    parts.push(['## What you remember about this conversation', ...input.memories.map((m) => `- (${m.type}) ${m.content}`)].join('\n'));
  }
  if (input.context.length) parts.push(['## Context', ...input.context].join('\n'));
  const system: ChatMessage = { role: 'system', content: parts.join('\n\n') };
  const tail = input.history.slice(Math.max(0, input.history.length - input.pinnedTail));
  let older = input.history.slice(0, input.history.length - tail.length);
  let messages = [system, ...older, ...tail];
  let estimated = input.estimate(messages);
  let dropped = 0;
  while (older.length && estimated > input.budgetTokens) {
    // Drop from the oldest; never start the kept history with an orphaned tool result.
    let cut = 1;
    while (cut < older.length && older[cut]!.role === 'tool') cut += 1;
    older = older.slice(cut);
    dropped += cut;
    messages = [system, ...older, ...tail];
    estimated = input.estimate(messages);
  }
  return { messages, estimatedTokens: estimated, droppedMessages: dropped };
}
