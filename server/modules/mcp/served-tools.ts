import { z } from 'zod';
import type { Ctx } from '../../common/ctx';
import { TrustLevel } from '../../common/trust';
import type { Beat, BeatService } from '../beats';
import { describeBeat } from '../beats';
import { type MemorySearchService, type MemoryService, MemoryScope, MemoryType } from '../memory';
import { ChatKind, SessionStatus, type SessionService } from '../sessions';
import { defineTool, ToolRefusedError, type Tool } from '../tools';

/** The channel name the `/mcp` endpoint's calls run on (audit, per-channel tool switches). */
export const MCP_SERVE_CHANNEL = 'mcp';

/** Port: one message to the caller's own MCP session, answered by the assistant. */
export interface McpAsk {
  ask(ctx: Ctx, text: string, signal: AbortSignal): Promise<string>;
}

/** What the tools of `/mcp` run on: the same services GraphQL uses. */
export interface ServedToolDeps {
  search: Pick<MemorySearchService, 'searchInSession'>;
  memories: Pick<MemoryService, 'create'>;
  sessions: Pick<SessionService, 'findMany'>;
  /** Absent in processes without the chat services (no Redis). */
  beats?: Pick<BeatService, 'findMany' | 'preview'> | null;
  ask?: McpAsk | null;
}

const searchSchema = z
  .object({
    query: z.string().trim().min(1).max(500).describe('What to look for.'),
    limit: z.number().int().min(1).max(20).optional().describe('Default 5.'),
  })
  .strict();

const saveSchema = z
  .object({
    content: z.string().trim().min(1).max(2000).describe('One self-contained sentence or two.'),
    type: z.enum(['fact', 'lesson', 'reminder']).optional().describe('Default fact.'),
    importance: z.number().min(0).max(1).optional().describe('Default 0.5.'),
  })
  .strict();

const sessionsSchema = z
  .object({
    limit: z.number().int().min(1).max(50).optional().describe('Default 20, newest first.'),
    status: z.enum(['ACTIVE', 'ARCHIVED']).optional(),
  })
  .strict();

const askSchema = z.object({ text: z.string().trim().min(1).max(8000).describe('Your message to the assistant.') }).strict();

function ownUser(ctx: Ctx): string {
  const userId = ctx.userId;
  if (!userId) throw new ToolRefusedError('Only a known user may use this tool.');
  return userId;
}

/**
 * The tools Muninn serves at `/mcp`, always acting as the token's user on that user's own data, whatever
 * their trust: memories are their own and global ones (a direct-chat view, never anyone else's), sessions
 * and beats their own. Trust floors: MEMBER, `list_beats` TRUSTED (as the beat tools).
 */
export function createServedTools(deps: ServedToolDeps): Tool[] {
  const tools: Tool[] = [
    defineTool({
      name: 'memory_search',
      description: "Searches the user's long-term memory in Muninn (their own and shared memories): facts, lessons, summaries and reminders from earlier conversations.",
      schema: searchSchema,
      minTrust: TrustLevel.MEMBER,
      summarizeArgs: (a) => `query of ${a.query.length} characters`,
      async run(tc, a) {
        const userId = ownUser(tc.ctx);
        const results = await deps.search.searchInSession(tc.ctx, { chatKind: ChatKind.DM, key: `${MCP_SERVE_CHANNEL}:${userId}` }, a.query, { limit: a.limit ?? 5, minScore: 0 });
        return {
          results: results.map((r) => ({ id: r.memory.id, type: r.memory.type, content: r.memory.content, score: Math.round(r.score * 1000) / 1000, updatedAt: r.memory.updatedAt.toISOString() })),
        };
      },
    }),
    defineTool({
      name: 'memory_save',
      description: "Saves a fact, lesson or reminder to the user's private long-term memory in Muninn.",
      schema: saveSchema,
      minTrust: TrustLevel.MEMBER,
      summarizeArgs: (a) => `${a.type ?? 'fact'} of ${a.content.length} characters`,
      async run(tc, a) {
        const userId = ownUser(tc.ctx);
        const memory = await deps.memories.create(tc.ctx, { content: a.content, type: (a.type ?? 'fact') as MemoryType, scope: MemoryScope.USER, userId, importance: a.importance ?? null });
        return { saved: true, id: memory.id, type: memory.type };
      },
    }),
    defineTool({
      name: 'list_sessions',
      description: "Lists the user's own conversations with Muninn (channel, status, size, last activity), newest first.",
      schema: sessionsSchema,
      minTrust: TrustLevel.MEMBER,
      async run(tc, a) {
        const userId = ownUser(tc.ctx);
        const page = await deps.sessions.findMany(tc.ctx, { userId, ...(a.status ? { status: SessionStatus[a.status] } : {}) }, { first: a.limit ?? 20, afterId: null });
        return {
          sessions: page.nodes.map((s) => ({ id: s.id, channel: s.channel, status: s.status, messages: s.messageCount, startedAt: s.startedAt.toISOString(), lastActivityAt: s.lastActivityAt.toISOString() })),
        };
      },
    }),
  ];
  const ask = deps.ask;
  if (ask) {
    tools.push(
      defineTool({
        name: 'send_message',
        description: "Sends a message to Muninn in the user's own MCP conversation and returns the assistant's answer.",
        schema: askSchema,
        minTrust: TrustLevel.MEMBER,
        // A whole turn, with the assistant's own tool calls.
        timeoutMs: 300_000,
        summarizeArgs: (a) => `message of ${a.text.length} characters`,
        async run(tc, a) {
          ownUser(tc.ctx);
          return { answer: await ask.ask(tc.ctx, a.text, tc.signal) };
        },
      }),
    );
  }
  const beats = deps.beats;
  if (beats) {
    tools.push(
      defineTool({
        name: 'list_beats',
        description: "Lists the user's own beats (scheduled reminders and tasks) with their schedule and next runs.",
        schema: z.object({}).strict(),
        minTrust: TrustLevel.TRUSTED,
        async run(tc) {
          const userId = ownUser(tc.ctx);
          const list: Beat[] = (await beats.findMany(tc.ctx, { userId })).filter((b) => b.userId === userId);
          return { beats: list.map((b) => describeBeat(b, beats.preview(b))) };
        },
      }),
    );
  }
  return tools;
}
