import type { countTokens as CountTokens } from 'gpt-tokenizer';
import type { ChatMessage, ToolSpec } from './model-provider';
import { loadTokenCounter } from '../../common/token-ranks';

// === Token estimation for prompt budgets
// gpt-tokenizer's default encoding (o200k_base) is exact for current OpenAI models and a fair estimate
// (usually within ~15 %) for Llama/Qwen/Mistral tokenizers, which is enough for budgets and for usage
// that a provider did not report (flagged `estimated`).

/** Tokens added per message for role and separators (the ChatML framing OpenAI documents). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Tokens that prime the assistant's reply. */
export const REPLY_PRIMING_TOKENS = 3;
/** Fixed cost of one image (OpenAI's 512×512 "low detail" tile is 85; most local VLMs use 256–576). */
export const IMAGE_TOKENS = 512;
/** Tokens per tool call on top of its name and arguments. */
export const TOOL_CALL_OVERHEAD_TOKENS = 8;

// Special-token text such as "<|endoftext|>" in user input must count as ordinary text, not throw.
const NO_SPECIALS = { disallowedSpecial: new Set<string>() };

// The o200k tables cost ≈ 30 MiB and ≈ 0.4 s to load (common/token-ranks.ts): they are loaded on the first count
// (the first prompt a worker builds), not at start, so start-up stays fast and an API-only process never pays.
let counter: typeof CountTokens | null = null;
function tokenCounter(): typeof CountTokens {
  counter ??= loadTokenCounter();
  return counter;
}

// Each turn re-counts the same system prompt and most of the same history: counts are remembered (least
// recently used out first; each text is charged its length plus ENTRY_CHARS for the entry itself, at most
// CACHE_CHARS in all), short texts too, since a chat's history is mostly short messages.
const ENTRY_CHARS = 64;
const CACHE_CHARS = 4_000_000;
const counted = new Map<string, number>();
let cachedChars = 0;

/** Tokens of a piece of text. */
export function estimateTokens(text: string): number {
  if (!text) return 0;
  const hit = counted.get(text);
  if (hit !== undefined) {
    counted.delete(text);
    counted.set(text, hit);
    return hit;
  }
  const tokens = tokenCounter()(text, NO_SPECIALS);
  if (text.length <= CACHE_CHARS / 8) {
    counted.set(text, tokens);
    cachedChars += text.length + ENTRY_CHARS;
    for (const [oldest] of counted) {
      if (cachedChars <= CACHE_CHARS) break;
      counted.delete(oldest);
      cachedChars -= oldest.length + ENTRY_CHARS;
    }
  }
  return tokens;
}

/** Tokens of one message, including per-message overhead, images and tool calls. */
export function estimateMessage(message: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS;
  if (typeof message.content === 'string') {
    tokens += estimateTokens(message.content);
  } else {
    for (const part of message.content) tokens += part.type === 'text' ? estimateTokens(part.text) : IMAGE_TOKENS;
  }
  if (message.name) tokens += estimateTokens(message.name) + 1;
  for (const call of message.toolCalls ?? []) {
    tokens += TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(call.name) + estimateTokens(call.arguments);
  }
  return tokens;
}

/** Tokens of a whole prompt: every message plus the reply priming. */
export function estimateMessages(messages: readonly ChatMessage[]): number {
  if (messages.length === 0) return 0;
  return messages.reduce((sum, m) => sum + estimateMessage(m), REPLY_PRIMING_TOKENS);
}

/** Tokens that tool schemas add to a prompt (they are serialized into the system prompt by the provider). */
export function estimateTools(tools: readonly ToolSpec[] | undefined): number {
  if (!tools?.length) return 0;
  return tools.reduce((sum, t) => sum + TOOL_CALL_OVERHEAD_TOKENS + estimateTokens(`${t.name}\n${t.description}\n${JSON.stringify(t.parameters)}`), 0);
}
