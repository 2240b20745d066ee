import type { z } from 'zod';
import type { Ctx } from '../../common/ctx';
import { TrustLevel, trustAtLeast } from '../../common/trust';

/** What a tool run knows about where it runs: the sender's ctx, the session and chat, and an abort signal. */
export interface ToolContext {
  /** The sender's context; `ctx.trust` is what the trust checks compare against. */
  ctx: Ctx;
  sessionId: string;
  /** Channel of the turn (`telegram`, `web`, …); per-channel activation is read for this channel. */
  channel: string;
  chatId: string | null;
  /** Aborted when the turn is stopped; the pipeline hands each tool a child signal that also fires on timeout. */
  signal: AbortSignal;
  turnId?: string;
}

/** What the model is shown for one tool (the models module declares the same structural type). */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/**
 * A function the model may call. The pipeline validates arguments against `schema`, checks `minTrust` and
 * per-channel activation at execution time, asks for approval when `requiresApproval`, and applies the
 * timeout and output cap; `run` only does the work.
 *
 * @example
 * const echo: Tool<{ text: string }> = {
 *   name: 'echo', description: 'Repeats text.', schema: z.object({ text: z.string() }),
 *   minTrust: TrustLevel.MEMBER, run: async (_tc, { text }) => text,
 * };
 */
export interface Tool<A = unknown> {
  /** Unique, `^[a-z][a-z0-9_]{0,63}$` (what OpenAI-style function names accept). */
  name: string;
  description: string;
  /** zod 4 schema of the arguments; the JSON schema for the model comes from `z.toJSONSchema`. */
  schema: z.ZodType<A>;
  /**
   * The JSON schema the model is shown, when it does not come from `schema` (tools of MCP servers, whose
   * server validates the arguments itself; `schema` then only checks the shape).
   */
  parameters?: Record<string, unknown>;
  /** Timeout of one run when it differs from `tools.timeout_ms` (an MCP server's `timeout_ms`). */
  timeoutMs?: number;
  /** Lowest trust that may run the tool. GUEST and BLOCKED never run tools, whatever this says (DESIGN §3). */
  minTrust: TrustLevel;
  /** Pause the turn until an OWNER (or an ADMIN, for tools below OWNER) decides. @default false */
  requiresApproval?: boolean;
  /** Activation when `plugin_settings` has no row for the tool. @default true */
  defaultEnabled?: boolean;
  /**
   * A short, secret-free description of the arguments for the audit log and approval prompts
   * (e.g. `GET https://example.com/path`). Without it the pipeline summarizes generically.
   */
  summarizeArgs?(args: A): string;
  /** Does the work. Throw `ToolRefusedError` for policy refusals (audited), anything else for failures. */
  run(tc: ToolContext, args: A): Promise<string | Record<string, unknown>>;
}

/**
 * Tools that come and go at run time (the tools of MCP servers). The registry asks the source for the
 * sender's tools whenever it lists them, and looks a call's tool up by name with `get`.
 */
export interface ToolSource {
  /** The tools this source offers to the sender of `ctx` now (it may connect or refresh to know them). */
  toolsFor(ctx: Ctx): Promise<Tool[]>;
  /** A tool by name, as last listed; undefined when the source has no such tool. */
  get(name: string): Tool | undefined;
  /** Every tool the source knows now (for listings without a sender). */
  all(): Tool[];
}

/**
 * Thrown by a tool when a policy forbids what the arguments ask for (a private address, a command not on
 * the allowlist, a message to someone else's identity). The pipeline answers `refused` and audits it as
 * `tool.refused`, like a trust refusal.
 */
export class ToolRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolRefusedError';
  }
}

/**
 * Thrown by a tool when the user must act before it can run (connect an account, open a sign-in link).
 * The pipeline answers `error` with the whole message (up to 2000 characters, so a link is not cut).
 */
export class ToolActionRequiredError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolActionRequiredError';
  }
}

/** The lowest trust that may use a tool: its `minTrust`, but never below MEMBER (GUEST gets no tools). */
export function effectiveMinTrust(tool: Pick<Tool, 'minTrust'>): TrustLevel {
  return trustAtLeast(tool.minTrust, TrustLevel.MEMBER) ? tool.minTrust : TrustLevel.MEMBER;
}

/** Whether a sender of `trust` may use `tool` (activation aside). */
export function mayUseTool(trust: TrustLevel, tool: Pick<Tool, 'minTrust'>): boolean {
  return trustAtLeast(trust, effectiveMinTrust(tool));
}

/** Identity helper that keeps the argument type inferred from the schema. */
export function defineTool<A>(tool: Tool<A>): Tool<A> {
  return tool;
}
