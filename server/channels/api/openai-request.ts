import type { ToolCall, ToolChoice, ToolSpec } from '../../modules/models';
import { OpenAIError } from './openai-errors';

/** Limits of one chat completion request (`channels.api.*`). */
export interface ApiRequestLimits {
  maxMessages: number;
  maxMessageChars: number;
  maxImages: number;
  maxImageBytes: number;
}

/** An image of a user message: inline (a data URL, already decoded and checked) or an http(s) URL to fetch. */
export type ImageRef = { kind: 'data'; mimeType: string; dataBase64: string } | { kind: 'url'; url: string; param: string };

export interface ApiMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  text: string;
  images: ImageRef[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

/** A chat completion request as Muninn runs it; everything else a client sends (temperature, user…) is ignored. */
export interface ChatCompletionRequest {
  model: string;
  messages: ApiMessage[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | null;
  tools: ToolSpec[];
  toolChoice: ToolChoice | null;
}

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_TOOLS = 128;
const DATA_URL = /^data:([a-z]+\/[a-z0-9.+-]+)(?:;[a-z0-9=.-]+)*;base64,([A-Za-z0-9+/=\s]*)$/i;

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

const bad = OpenAIError.invalid;

/** Decoded size of base64 text (without whitespace). */
function base64Bytes(b64: string): number {
  const clean = b64.replace(/\s+/g, '');
  const pad = clean.endsWith('==') ? 2 : clean.endsWith('=') ? 1 : 0;
  return Math.floor((clean.length * 3) / 4) - pad;
}

function parseImage(value: unknown, param: string, limits: ApiRequestLimits): ImageRef {
  const url = typeof value === 'string' ? value : isObject(value) ? value.url : undefined;
  if (typeof url !== 'string' || !url) throw bad(`${param}.url must be a non-empty string.`, `${param}.url`);
  if (url.startsWith('data:')) {
    const m = DATA_URL.exec(url);
    if (!m) throw bad(`${param}.url is not a base64 data URL (data:image/png;base64,…).`, `${param}.url`, 'invalid_image_url');
    const mimeType = m[1]!.toLowerCase();
    if (!IMAGE_TYPES.includes(mimeType)) throw bad(`${param}.url has type ${mimeType}; images must be one of ${IMAGE_TYPES.join(', ')}.`, `${param}.url`, 'invalid_image_format');
    if (base64Bytes(m[2]!) > limits.maxImageBytes) throw OpenAIError.tooLarge(`${param} is larger than ${Math.round(limits.maxImageBytes / 1024)} KiB (channels.api.max_image_kb).`, `${param}.url`);
    return { kind: 'data', mimeType, dataBase64: m[2]!.replace(/\s+/g, '') };
  }
  if (/^https?:\/\//i.test(url)) {
    try {
      new URL(url);
    } catch {
      throw bad(`${param}.url is not a valid URL.`, `${param}.url`, 'invalid_image_url');
    }
    return { kind: 'url', url, param };
  }
  throw bad(`${param}.url must be a data URL or an http(s) URL.`, `${param}.url`, 'invalid_image_url');
}

function parseContent(raw: Json, role: ApiMessage['role'], param: string, limits: ApiRequestLimits): { text: string; images: ImageRef[] } {
  const content = raw.content;
  if (content === undefined || content === null) {
    if (role === 'assistant') return { text: '', images: [] };
    throw bad(`${param}.content is required for ${role} messages.`, `${param}.content`);
  }
  if (typeof content === 'string') return { text: content, images: [] };
  if (!Array.isArray(content)) throw bad(`${param}.content must be a string or an array of content parts, not ${kindOf(content)}.`, `${param}.content`);
  const texts: string[] = [];
  const images: ImageRef[] = [];
  content.forEach((part: unknown, j) => {
    const p = `${param}.content[${j}]`;
    if (!isObject(part)) throw bad(`${p} must be an object, not ${kindOf(part)}.`, p);
    if (part.type === 'text' || part.type === 'input_text' || (part.type === 'refusal' && role === 'assistant')) {
      const text = part.type === 'refusal' ? part.refusal : part.text;
      if (typeof text !== 'string') throw bad(`${p}.text must be a string.`, `${p}.text`);
      texts.push(text);
    } else if (part.type === 'image_url') {
      if (role !== 'user') throw bad(`${p}: images are accepted in user messages only.`, p);
      images.push(parseImage(part.image_url, `${p}.image_url`, limits));
    } else {
      throw bad(`${p}.type ${JSON.stringify(part.type)} is not supported here (text and image_url are).`, `${p}.type`, 'unsupported_content_type');
    }
  });
  return { text: texts.join('\n'), images };
}

function parseToolCalls(value: unknown, param: string): ToolCall[] {
  if (!Array.isArray(value)) throw bad(`${param} must be an array.`, param);
  return value.map((c: unknown, k) => {
    const p = `${param}[${k}]`;
    if (!isObject(c) || !isObject(c.function)) throw bad(`${p} must be {"id", "type": "function", "function": {"name", "arguments"}}.`, p);
    const { id } = c;
    const { name, arguments: args } = c.function;
    if (typeof id !== 'string' || !id) throw bad(`${p}.id must be a non-empty string.`, `${p}.id`);
    if (typeof name !== 'string' || !name) throw bad(`${p}.function.name must be a non-empty string.`, `${p}.function.name`);
    return { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) };
  });
}

function parseMessage(raw: unknown, i: number, limits: ApiRequestLimits): ApiMessage {
  const param = `messages[${i}]`;
  if (!isObject(raw)) throw bad(`${param} must be an object, not ${kindOf(raw)}.`, param);
  const given = raw.role;
  const role = given === 'developer' ? 'system' : given;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    throw bad(`${param}.role must be one of system, developer, user, assistant, tool (got ${JSON.stringify(given ?? null)}).`, `${param}.role`);
  }
  const { text, images } = parseContent(raw, role, param, limits);
  if (text.length > limits.maxMessageChars) {
    throw bad(`${param}.content is longer than ${limits.maxMessageChars} characters (channels.api.max_message_chars).`, `${param}.content`, 'string_above_max_length');
  }
  const message: ApiMessage = { role, text, images };
  if (role === 'assistant' && raw.tool_calls !== undefined && raw.tool_calls !== null) message.toolCalls = parseToolCalls(raw.tool_calls, `${param}.tool_calls`);
  if (role === 'tool') {
    if (typeof raw.tool_call_id !== 'string' || !raw.tool_call_id) throw bad(`${param}.tool_call_id is required for tool messages.`, `${param}.tool_call_id`);
    message.toolCallId = raw.tool_call_id;
  }
  return message;
}

function parseTools(value: unknown): ToolSpec[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw bad('tools must be an array.', 'tools');
  if (value.length > MAX_TOOLS) throw bad(`tools may hold at most ${MAX_TOOLS} tools.`, 'tools', 'array_above_max_length');
  const names = new Set<string>();
  return value.map((t: unknown, k) => {
    const p = `tools[${k}]`;
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) throw bad(`${p} must be {"type": "function", "function": {"name", …}}.`, p);
    const { name, description, parameters } = t.function;
    if (typeof name !== 'string' || !TOOL_NAME.test(name)) throw bad(`${p}.function.name must be 1–64 letters, digits, _ or -.`, `${p}.function.name`);
    if (names.has(name)) throw bad(`${p}.function.name ${name} is given twice.`, `${p}.function.name`);
    names.add(name);
    if (parameters !== undefined && !isObject(parameters)) throw bad(`${p}.function.parameters must be a JSON schema object.`, `${p}.function.parameters`);
    return { name, description: typeof description === 'string' ? description : '', parameters: (parameters as Json | undefined) ?? { type: 'object', properties: {} } };
  });
}

function parseToolChoice(value: unknown, tools: ToolSpec[]): ToolChoice | null {
  if (value === undefined || value === null) return null;
  if (value === 'none' || value === 'auto' || value === 'required') {
    if (value === 'required' && !tools.length) throw bad('tool_choice "required" needs tools.', 'tool_choice');
    return value;
  }
  if (isObject(value) && value.type === 'function' && isObject(value.function) && typeof value.function.name === 'string') {
    const name = value.function.name;
    if (!tools.some((t) => t.name === name)) throw bad(`tool_choice names ${name}, which is not in tools.`, 'tool_choice');
    return { name };
  }
  throw bad('tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name"}}.', 'tool_choice');
}

function parseMaxTokens(body: Json): number | null {
  for (const field of ['max_completion_tokens', 'max_tokens'] as const) {
    const v = body[field];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw bad(`${field} must be a positive integer.`, field);
    return v;
  }
  return null;
}

/**
 * Checks a `POST /v1/chat/completions` body and brings it into Muninn's terms; every problem is a 400 (or
 * 413 for an oversize image) naming the field, as OpenAI answers.
 */
export function parseChatCompletionRequest(body: unknown, limits: ApiRequestLimits): ChatCompletionRequest {
  if (!isObject(body)) throw bad(`The request body must be a JSON object, not ${kindOf(body)}.`);
  if (typeof body.model !== 'string' || !body.model.trim()) throw bad('model is required (GET /v1/models lists them).', 'model', 'missing_required_parameter');
  const rawMessages = body.messages;
  if (!Array.isArray(rawMessages)) throw bad('messages must be an array of messages.', 'messages', 'missing_required_parameter');
  if (!rawMessages.length) throw bad('messages must not be empty.', 'messages', 'empty_array');
  if (rawMessages.length > limits.maxMessages) throw bad(`messages may hold at most ${limits.maxMessages} messages (channels.api.max_messages).`, 'messages', 'array_above_max_length');
  const messages = rawMessages.map((m: unknown, i) => parseMessage(m, i, limits));
  const imageCount = messages.reduce((n, m) => n + m.images.length, 0);
  if (imageCount > limits.maxImages) throw bad(`A request may carry at most ${limits.maxImages} images (channels.api.max_images).`, 'messages', 'too_many_images');
  const last = messages[messages.length - 1]!;
  if (last.role !== 'user' && last.role !== 'tool') throw bad(`The last message must be from the user or a tool, not ${last.role}.`, `messages[${messages.length - 1}].role`);
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw bad('Only n = 1 is supported.', 'n');
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') throw bad('stream must be a boolean.', 'stream');
  const streamOptions = body.stream_options;
  if (streamOptions !== undefined && streamOptions !== null && !isObject(streamOptions)) throw bad('stream_options must be an object.', 'stream_options');
  const tools = parseTools(body.tools);
  return {
    model: body.model.trim(),
    messages,
    stream: body.stream === true,
    includeUsage: body.stream === true && isObject(streamOptions) && streamOptions.include_usage === true,
    maxTokens: parseMaxTokens(body),
    tools,
    toolChoice: parseToolChoice(body.tool_choice, tools),
  };
}
