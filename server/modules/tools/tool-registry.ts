import { z } from 'zod';
import type { Ctx } from '../../common/ctx';
import type { TrustLevel } from '../../common/trust';
import type { PluginSettingService } from '../plugins';
import { effectiveMinTrust, mayUseTool, type Tool, type ToolSource, type ToolSpec } from './tool';

const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** One tool as the `tools` query and `/tools` show it. */
export interface ToolDescription {
  name: string;
  description: string;
  /** Effective floor: the tool's `minTrust`, never below MEMBER. */
  minTrust: TrustLevel;
  requiresApproval: boolean;
  /** Active on the channel asked about (plugin_settings, else the tool's default). */
  enabled: boolean;
  /** Enabled and the caller's trust is high enough. */
  usable: boolean;
}

/** Where activation comes from; `PluginSettingService` in the app. */
export type ActivationSource = Pick<PluginSettingService, 'isEnabled' | 'enabledMany'>;

/**
 * The tools of this process, by name. What the model is shown (`specsFor`) is filtered by the sender's
 * trust and per-channel activation; the pipeline checks both again when a call runs.
 */
export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly schemas = new Map<string, Record<string, unknown>>();
  private readonly sources: ToolSource[] = [];

  constructor(private readonly activation: ActivationSource) {}

  /** Adds a tool; a second tool with the same name or an invalid name is a programming error. */
  register(tool: Tool): this {
    if (!TOOL_NAME.test(tool.name)) throw new Error(`Tool name "${tool.name}" is invalid: use lowercase letters, digits and _ (at most 64).`);
    if (this.tools.has(tool.name)) throw new Error(`A tool named "${tool.name}" is already registered.`);
    this.tools.set(tool.name, tool);
    return this;
  }

  /** Adds a source of tools that change at run time (MCP servers); registered tools win on a name clash. */
  addSource(source: ToolSource): this {
    this.sources.push(source);
    return this;
  }

  get(name: string): Tool | undefined {
    const tool = this.tools.get(name);
    if (tool) return tool;
    for (const source of this.sources) {
      const found = source.get(name);
      if (found) return found;
    }
    return undefined;
  }

  /** Every registered tool in registration order, then what the sources know now. */
  all(): Tool[] {
    return [...this.tools.values(), ...this.sources.flatMap((s) => s.all().filter((t) => !this.tools.has(t.name)))];
  }

  /** The registered tools and the sources' tools for the sender of `ctx`. */
  private async toolsFor(ctx: Ctx): Promise<Tool[]> {
    if (!this.sources.length) return [...this.tools.values()];
    const listed = await Promise.all(this.sources.map((s) => s.toolsFor(ctx)));
    return [...this.tools.values(), ...listed.flat().filter((t) => !this.tools.has(t.name))];
  }

  /** Whether `tool` is active on `channel` (null: the global setting). */
  isActive(ctx: Ctx, tool: Tool, channel: string | null): Promise<boolean> {
    return this.activation.isEnabled(ctx, tool.name, channel, tool.defaultEnabled ?? true);
  }

  /** The tools the sender may use and that are active on `channel`, as the model should see them. */
  async specsFor(ctx: Ctx, channel: string): Promise<ToolSpec[]> {
    const usable = (await this.toolsFor(ctx)).filter((tool) => mayUseTool(ctx.trust, tool));
    const active = await this.activeMap(ctx, usable, channel);
    return usable.filter((tool) => active.get(tool.name)).map((tool) => ({ name: tool.name, description: tool.description, parameters: this.parametersOf(tool) }));
  }

  /** Every tool with its floor and whether it is enabled on `channel` and usable by the caller. */
  async describeFor(ctx: Ctx, channel: string | null): Promise<ToolDescription[]> {
    const tools = await this.toolsFor(ctx);
    const active = await this.activeMap(ctx, tools, channel);
    return tools.map((tool) => {
      const enabled = active.get(tool.name)!;
      return {
        name: tool.name,
        description: tool.description,
        minTrust: effectiveMinTrust(tool),
        requiresApproval: tool.requiresApproval ?? false,
        enabled,
        usable: enabled && mayUseTool(ctx.trust, tool),
      };
    });
  }

  /** {@link isActive} of several tools in one look-up: tool name → active. */
  private activeMap(ctx: Ctx, tools: Tool[], channel: string | null): Promise<Map<string, boolean>> {
    return this.activation.enabledMany(ctx, tools.map((tool) => ({ plugin: tool.name, fallback: tool.defaultEnabled ?? true })), channel);
  }

  /** JSON schema of a tool's arguments (input side, so defaulted fields are optional), cached. */
  parametersOf(tool: Tool): Record<string, unknown> {
    if (tool.parameters) return tool.parameters;
    let schema = this.schemas.get(tool.name);
    if (!schema) {
      const { $schema: _drop, ...rest } = z.toJSONSchema(tool.schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
      schema = rest;
      this.schemas.set(tool.name, schema);
    }
    return schema;
  }
}
