import { randomBytes } from 'node:crypto';
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsBase,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { assertNever } from '../../../common/assert-never';
import type { ChatMessage, ChatRequest, ContentPart, ToolCall, ToolSpec, Usage } from '../model-provider';

// === Wire format of OpenAI-compatible servers (mechanical mapping; STYLE §6.18 exempt)
// Requests: our ChatMessage/ToolSpec → the chat-completions body. Responses: every value from the server
// goes through a `parse*` function that names the offending field and its actual type, so a server that
// speaks a slightly different dialect fails with a clear message instead of `undefined` deep inside.

/** A response from the server did not have the expected shape. */
export class WireParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireParseError';
  }
}

/** What the target model can take. */
export interface WireCapabilities {
  supportsTools: boolean;
  supportsVision: boolean;
}

// === Requests

const NAME_PATTERN = /[^a-zA-Z0-9_-]/g;

/** OpenAI allows `name` only as ^[a-zA-Z0-9_-]{1,64}$; other characters become `_`. */
function wireName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const clean = name.replace(NAME_PATTERN, '_').slice(0, 64);
  return /[a-zA-Z0-9]/.test(clean) ? clean : undefined;
}

function imageNote(part: Extract<ContentPart, { type: 'image' }>): string {
  return `[image (${part.mimeType}) omitted: this model cannot see images]`;
}

/** Text of a message with images replaced by a short note. */
export function contentAsText(content: string | ContentPart[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : imageNote(p))).join('\n');
}

/** User content: a plain string unless an image must travel as an `image_url` data URL. */
function userContent(
  content: string | ContentPart[],
  caps: WireCapabilities,
): string | ChatCompletionContentPart[] {
  if (typeof content === 'string') return content;
  const hasImage = content.some((p) => p.type === 'image');
  if (!hasImage || !caps.supportsVision) return contentAsText(content);
  return content.map((p): ChatCompletionContentPart =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : { type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${p.dataBase64}` } },
  );
}

function argumentsValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/**
 * Tool calls written as text, for models without native tool calling: the same `{"tool_calls":[…]}`
 * block such models are asked to produce, so the transcript stays consistent.
 */
export function toolCallsAsText(calls: readonly ToolCall[]): string {
  return JSON.stringify({
    tool_calls: calls.map((c) => ({ id: c.id, name: c.name, arguments: argumentsValue(c.arguments) })),
  });
}

/** Maps our messages to the wire format for a model with the given capabilities. */
export function toWireMessages(
  messages: readonly ChatMessage[],
  caps: WireCapabilities,
): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    const name = wireName(m.name);
    switch (m.role) {
      case 'system':
        return { role: 'system', content: contentAsText(m.content), ...(name ? { name } : {}) };
      case 'user':
        return { role: 'user', content: userContent(m.content, caps), ...(name ? { name } : {}) };
      case 'assistant': {
        const text = contentAsText(m.content);
        const calls = m.toolCalls ?? [];
        if (calls.length === 0) return { role: 'assistant', content: text, ...(name ? { name } : {}) };
        if (!caps.supportsTools) {
          return {
            role: 'assistant',
            content: text ? `${text}\n${toolCallsAsText(calls)}` : toolCallsAsText(calls),
          };
        }
        return {
          role: 'assistant',
          content: text || null,
          tool_calls: calls.map((c) => ({
            id: c.id,
            type: 'function',
            function: { name: c.name, arguments: c.arguments || '{}' },
          })),
        };
      }
      case 'tool': {
        const text = contentAsText(m.content);
        if (!caps.supportsTools) {
          return {
            role: 'user',
            content: `Result of tool ${m.name ?? 'call'} (call ${m.toolCallId ?? '?'}):\n${text}`,
          };
        }
        return { role: 'tool', tool_call_id: m.toolCallId ?? '', content: text };
      }
      default:
        return assertNever(m.role, 'chat role');
    }
  });
}

export function toWireTools(tools: readonly ToolSpec[]): ChatCompletionTool[] {
  return tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

/** The request body, without `stream` (the caller adds it). */
export function buildChatBody(
  req: ChatRequest,
  caps: WireCapabilities,
  options: { maxTokensParam: 'max_tokens' | 'max_completion_tokens' },
): Omit<ChatCompletionCreateParamsBase, 'stream'> {
  const body: Omit<ChatCompletionCreateParamsBase, 'stream'> = {
    model: req.model,
    messages: toWireMessages(req.messages, caps),
  };
  if (caps.supportsTools && req.tools?.length) {
    body.tools = toWireTools(req.tools);
    if (req.toolChoice)
      body.tool_choice =
        typeof req.toolChoice === 'string'
          ? req.toolChoice
          : { type: 'function', function: { name: req.toolChoice.name } };
  }
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.maxTokens !== undefined) body[options.maxTokensParam] = req.maxTokens;
  return body;
}

// === Parsing helpers

type Json = Record<string, unknown>;

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expectRecord(value: unknown, path: string): Json {
  if (!isRecord(value)) throw new WireParseError(`${path} is ${typeOf(value)}, expected an object`);
  return value;
}

function optString(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new WireParseError(`${path} is ${typeOf(value)}, expected a string`);
  return value;
}

function optNumber(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new WireParseError(`${path} is ${typeOf(value)}, expected a number`);
  return value;
}

function optArray(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new WireParseError(`${path} is ${typeOf(value)}, expected an array`);
  return value;
}

/** Tool-call arguments: normally JSON text; a few servers send the object itself. */
function argumentsText(value: unknown, path: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (isRecord(value)) return JSON.stringify(value);
  throw new WireParseError(`${path} is ${typeOf(value)}, expected a string`);
}

// === Usage

/** Provider-reported usage, or null when the response carried none. */
export function parseUsage(value: unknown, path = 'usage'): Omit<Usage, 'estimated'> | null {
  if (value === undefined || value === null) return null;
  const usage = expectRecord(value, path);
  const input = optNumber(usage.prompt_tokens, `${path}.prompt_tokens`);
  const output = optNumber(usage.completion_tokens, `${path}.completion_tokens`);
  if (input === undefined && output === undefined) return null;
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cacheRead = optNumber(details.cached_tokens, `${path}.prompt_tokens_details.cached_tokens`) ?? 0;
  // OpenRouter reports cache writes in prompt_tokens_details; Anthropic-style gateways at the top level.
  const cacheWrite =
    optNumber(details.cache_write_tokens, `${path}.prompt_tokens_details.cache_write_tokens`) ??
    optNumber(usage.cache_creation_input_tokens, `${path}.cache_creation_input_tokens`) ??
    0;
  // OpenRouter (and gateways like it) report what the call cost, in USD, as `usage.cost`.
  // Read leniently: a cost in an unexpected shape is left out (the price table is used), never an error.
  const cost = typeof usage.cost === 'number' ? usage.cost : undefined;
  return {
    inputTokens: input ?? 0,
    outputTokens: output ?? 0,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    ...(cost !== undefined && Number.isFinite(cost) && cost >= 0 ? { costUsd: cost } : {}),
  };
}

// === Streaming chunks

/** One tool-call fragment of a streamed delta. */
export interface ToolCallDelta {
  index: number | undefined;
  id?: string;
  name?: string;
  arguments?: string;
}

/** What one `chat.completion.chunk` contributes. */
export interface ParsedChunk {
  model?: string;
  content?: string;
  reasoning?: string;
  toolCalls: ToolCallDelta[];
  finishReason?: string;
  usage: Omit<Usage, 'estimated'> | null;
}

function parseToolCallDelta(value: unknown, path: string): ToolCallDelta {
  const call = expectRecord(value, path);
  const fn =
    call.function === undefined || call.function === null
      ? {}
      : expectRecord(call.function, `${path}.function`);
  return {
    index: optNumber(call.index, `${path}.index`),
    id: optString(call.id, `${path}.id`) || undefined,
    name: optString(fn.name, `${path}.function.name`) || undefined,
    arguments: argumentsText(fn.arguments, `${path}.function.arguments`),
  };
}

/** Parses one SSE data object of a streamed chat completion. Only choice 0 is read (we never ask for n > 1). */
export function parseChunk(value: unknown): ParsedChunk {
  const chunk = expectRecord(value, 'chunk');
  const out: ParsedChunk = {
    model: optString(chunk.model, 'chunk.model'),
    toolCalls: [],
    usage: parseUsage(chunk.usage, 'chunk.usage'),
  };
  const choices = optArray(chunk.choices, 'chunk.choices');
  const first = choices.find((c) => isRecord(c) && (c.index === undefined || c.index === 0));
  if (first === undefined) return out;
  const choice = expectRecord(first, 'chunk.choices[0]');
  out.finishReason = optString(choice.finish_reason, 'chunk.choices[0].finish_reason');
  if (choice.delta === undefined || choice.delta === null) return out;
  const delta = expectRecord(choice.delta, 'chunk.choices[0].delta');
  out.content = optString(delta.content, 'chunk.choices[0].delta.content');
  out.reasoning =
    optString(delta.reasoning_content, 'chunk.choices[0].delta.reasoning_content') ??
    optString(delta.reasoning, 'chunk.choices[0].delta.reasoning');
  out.toolCalls = optArray(delta.tool_calls, 'chunk.choices[0].delta.tool_calls').map((c, i) =>
    parseToolCallDelta(c, `chunk.choices[0].delta.tool_calls[${i}]`),
  );
  return out;
}

function generatedCallId(): string {
  return `call_${randomBytes(6).toString('hex')}`;
}

/**
 * Assembles streamed tool calls: fragments are grouped by `index` (id and name arrive first, arguments in
 * pieces). Servers that omit `index` are matched by id, else continue the last call.
 */
export class ToolCallAssembler {
  private readonly calls = new Map<number, { id?: string; name: string; arguments: string }>();
  private last: number | undefined;

  add(delta: ToolCallDelta): void {
    let index = delta.index;
    if (index === undefined) {
      const byId = delta.id ? [...this.calls].find(([, c]) => c.id === delta.id)?.[0] : undefined;
      index = byId ?? (delta.id || this.last === undefined ? this.calls.size : this.last);
    }
    let call = this.calls.get(index);
    if (!call) {
      call = { name: '', arguments: '' };
      this.calls.set(index, call);
    }
    if (delta.id && !call.id) call.id = delta.id;
    // Names arrive whole (some servers repeat them in every fragment), so they are set, not appended.
    if (delta.name && !call.name) call.name = delta.name;
    if (delta.arguments) call.arguments += delta.arguments;
    this.last = index;
  }

  get size(): number {
    return this.calls.size;
  }

  /** The calls in index order; missing ids are generated, empty arguments become `{}`. */
  finish(): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .filter(([, c]) => c.name)
      .map(([, c]) => ({
        id: c.id ?? generatedCallId(),
        name: c.name,
        arguments: c.arguments.trim() ? c.arguments : '{}',
      }));
  }
}

// === Non-streamed completion

export interface ParsedCompletion {
  model?: string;
  text: string;
  reasoning?: string;
  toolCalls: ToolCall[];
  finishReason?: string;
  usage: Omit<Usage, 'estimated'> | null;
}

/** Parses a `chat.completion` JSON body (non-streaming). */
export function parseCompletion(value: unknown): ParsedCompletion {
  const body = expectRecord(value, 'completion');
  const choices = optArray(body.choices, 'completion.choices');
  if (choices.length === 0) throw new WireParseError('completion.choices is empty, expected one choice');
  const choice = expectRecord(choices[0], 'completion.choices[0]');
  const message = expectRecord(choice.message, 'completion.choices[0].message');
  const assembler = new ToolCallAssembler();
  optArray(message.tool_calls, 'completion.choices[0].message.tool_calls').forEach((c, i) => {
    const delta = parseToolCallDelta(c, `completion.choices[0].message.tool_calls[${i}]`);
    assembler.add({ ...delta, index: i });
  });
  return {
    model: optString(body.model, 'completion.model'),
    text: optString(message.content, 'completion.choices[0].message.content') ?? '',
    reasoning:
      optString(message.reasoning_content, 'completion.choices[0].message.reasoning_content') ??
      optString(message.reasoning, 'completion.choices[0].message.reasoning'),
    toolCalls: assembler.finish(),
    finishReason: optString(choice.finish_reason, 'completion.choices[0].finish_reason'),
    usage: parseUsage(body.usage, 'completion.usage'),
  };
}

// === Embeddings

/** Decodes a base64 string of little-endian float32 values (the `encoding_format: 'base64'` form). */
export function decodeBase64Embedding(value: string, path = 'embedding'): number[] {
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length % 4 !== 0)
    throw new WireParseError(
      `${path} is base64 of ${bytes.length} bytes, expected a multiple of 4 (float32)`,
    );
  const out = new Array<number>(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/** Parses an embeddings response into one vector per input, in input order (floats or base64). */
export function parseEmbeddings(value: unknown, expectedCount: number): number[][] {
  const body = expectRecord(value, 'embeddings');
  const data = optArray(body.data, 'embeddings.data');
  if (data.length !== expectedCount)
    throw new WireParseError(
      `embeddings.data has ${data.length} items, expected ${expectedCount} (one per input)`,
    );
  const vectors: Array<number[] | undefined> = new Array(expectedCount);
  data.forEach((item, i) => {
    const entry = expectRecord(item, `embeddings.data[${i}]`);
    const index = optNumber(entry.index, `embeddings.data[${i}].index`) ?? i;
    if (index < 0 || index >= expectedCount || vectors[index])
      throw new WireParseError(`embeddings.data[${i}].index is ${index}, which is out of range or repeated`);
    const path = `embeddings.data[${i}].embedding`;
    const raw = entry.embedding;
    if (typeof raw === 'string') {
      vectors[index] = decodeBase64Embedding(raw, path);
    } else if (Array.isArray(raw) && raw.every((n) => typeof n === 'number')) {
      vectors[index] = raw as number[];
    } else if (ArrayBuffer.isView(raw) && !(raw instanceof DataView)) {
      // The SDK decodes base64 into a Float32Array when it chose the encoding itself.
      vectors[index] = Array.from(raw as unknown as ArrayLike<number>);
    } else {
      throw new WireParseError(`${path} is ${typeOf(raw)}, expected an array of numbers or a base64 string`);
    }
  });
  return vectors as number[][];
}

// === Models

/** Model ids from a `/models` listing. */
export function parseModelList(value: unknown): string[] {
  const body = expectRecord(value, 'models');
  return optArray(body.data, 'models.data').map((m, i) => {
    const id = optString(expectRecord(m, `models.data[${i}]`).id, `models.data[${i}].id`);
    if (!id) throw new WireParseError(`models.data[${i}].id is missing`);
    return id;
  });
}
