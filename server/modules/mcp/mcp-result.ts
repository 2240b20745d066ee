import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** An image a tool returned, for models that can see images. */
export interface McpImage {
  mimeType: string;
  /** base64 */
  data: string;
}

export interface RenderedMcpResult {
  text: string;
  images: McpImage[];
  isError: boolean;
}

function kb(base64: string): string {
  return `${Math.max(1, Math.round((base64.length * 3) / 4 / 1024))} KB`;
}

/**
 * The text of a tool result for the model: text parts as they are, links and embedded text resources
 * inlined, images kept aside (or, when the model cannot see them, replaced by a note), other binary parts
 * noted; `structuredContent` when there is nothing else. Longer than `maxChars`: cut, with a note saying so.
 */
export function renderMcpResult(result: CallToolResult, maxChars: number, keepImages: boolean): RenderedMcpResult {
  const parts: string[] = [];
  const images: McpImage[] = [];
  for (const part of result.content ?? []) {
    switch (part.type) {
      case 'text':
        parts.push(part.text);
        break;
      case 'image':
        if (keepImages) {
          images.push({ mimeType: part.mimeType, data: part.data });
          parts.push(`[image ${images.length}: ${part.mimeType}, ${kb(part.data)}, attached]`);
        } else parts.push(`[an image (${part.mimeType}, ${kb(part.data)}) was returned; this model cannot see images]`);
        break;
      case 'audio':
        parts.push(`[audio (${part.mimeType}, ${kb(part.data)}) was returned and is not shown]`);
        break;
      case 'resource_link':
        parts.push(`[resource: ${part.name ?? ''} ${part.uri}]`.replace('  ', ' '));
        break;
      case 'resource': {
        const r = part.resource as { uri: string; text?: string; blob?: string; mimeType?: string };
        parts.push(typeof r.text === 'string' ? r.text : `[binary resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''} is not shown]`);
        break;
      }
      default:
        parts.push(`[a ${(part as { type: string }).type} part is not shown]`);
    }
  }
  if (!parts.length && result.structuredContent) parts.push(JSON.stringify(result.structuredContent));
  let text = parts.join('\n');
  if (text.length > maxChars) {
    const total = text.length;
    text = `${text.slice(0, maxChars)}\n[MCP result cut: ${maxChars} of ${total} characters shown]`;
  }
  return { text: text || '(empty result)', images, isError: result.isError === true };
}
