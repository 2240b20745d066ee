import type { Ctx } from '../../common/ctx';
import { AppError } from '../../common/errors';
import { TrustLevel, trustAtLeast } from '../../common/trust';
import type { TurnScheduler } from '../conversation';
import type { SessionEventPublisher } from '../events';
import type { ModelCaller } from '../models';
import type { Session } from '../sessions';
import type { SessionRotation } from '../conversation';
import type { UsageService } from '../usage';
import type { UserService } from '../users';

/** What the tool layer tells `/tools`. */
export interface CommandTools {
  describeFor(ctx: Ctx, channel: string): Promise<Array<{ name: string; description: string; usable: boolean }>>;
}

/** What the approval layer offers `/approve <id> <decision>`. */
export interface CommandApprovals {
  decide(ctx: Ctx, id: string, decision: 'ALLOW_ONCE' | 'ALLOW_ALWAYS' | 'DENY'): Promise<{ status: string; tool: string }>;
}

/** Extra handlers registered by later modules (pairing codes for /approve, /compact, /memory, …). */
export interface CommandExtension {
  /** Command names without slash. */
  names: string[];
  minTrust: TrustLevel;
  help: string;
  run(ctx: Ctx, session: Session, args: string[], raw: string): Promise<CommandResult | null>;
}

export interface CommandResult {
  reply: string;
  /** Set when the command started a new session. */
  session?: Session;
}

export interface SlashCommandDeps {
  users: UserService;
  scheduler: TurnScheduler;
  rotation: SessionRotation;
  events: SessionEventPublisher;
  usage: UsageService;
  models: ModelCaller;
  tools: CommandTools;
  approvals: CommandApprovals;
  /** `/usage` adds what the sender spent today and this month against their budget. @default none */
  budgets?: { describe(ctx: Ctx, userId: string): Promise<string> };
  /** Messages of the session waiting for (or in) a turn. */
  pendingMessages: (ctx: Ctx, sessionId: string) => Promise<number>;
}

/** `$0.0123`: session costs are often below a cent. */
function formatCost(usd: number): string {
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

const GUEST_COMMANDS = new Set(['help', 'whoami']);

/** An entry of a platform's command menu (Telegram's setMyCommands). */
export interface MenuCommand {
  command: string;
  description: string;
}

const BUILT_IN_MENU: readonly MenuCommand[] = [
  { command: 'help', description: 'What I can do' },
  { command: 'whoami', description: 'Who you are to me' },
  { command: 'status', description: 'Model, context use, tokens, queue' },
  { command: 'new', description: 'Start a new session' },
  { command: 'stop', description: 'Stop the running turn' },
  { command: 'usage', description: 'Tokens and cost of this session, your budget' },
  { command: 'tools', description: 'Tools you may use' },
  { command: 'approve', description: 'Approve a pairing code or a tool call' },
];
const DECISIONS: Record<string, 'ALLOW_ONCE' | 'ALLOW_ALWAYS' | 'DENY'> = {
  allow_once: 'ALLOW_ONCE',
  once: 'ALLOW_ONCE',
  allow: 'ALLOW_ONCE',
  allow_always: 'ALLOW_ALWAYS',
  always: 'ALLOW_ALWAYS',
  deny: 'DENY',
};

/**
 * Slash commands (DESIGN §4), answered without a model call. GUESTs may use /help and /whoami only;
 * unknown commands get a short help.
 */
export class SlashCommandService {
  private readonly extensions: CommandExtension[] = [];

  constructor(private readonly deps: SlashCommandDeps) {}

  extend(extension: CommandExtension): void {
    this.extensions.push(extension);
  }

  /**
   * The command menu: the built-in commands, then every registered extension's first name with the
   * text after the dash of its help line (so /compact, /memory, /memories, … show up once registered).
   */
  menu(): MenuCommand[] {
    const out = [...BUILT_IN_MENU];
    for (const ext of this.extensions) {
      const command = ext.names[0]!;
      if (out.some((c) => c.command === command)) continue;
      const description = (ext.help.split(' — ')[1] ?? ext.help).trim();
      out.push({ command, description: description.charAt(0).toUpperCase() + description.slice(1, 256) });
    }
    return out;
  }

  /** Parses `/name args…` (also `/name@botname`); null when the text is not a command. */
  static parse(text: string): { name: string; args: string[] } | null {
    const match = /^\/([a-zA-Z_]+)(?:@\S+)?(?:\s+([\s\S]*))?$/.exec(text.trim());
    if (!match) return null;
    return { name: match[1]!.toLowerCase(), args: (match[2] ?? '').trim().split(/\s+/).filter(Boolean) };
  }

  async handle(ctx: Ctx, session: Session, text: string): Promise<CommandResult | null> {
    const parsed = SlashCommandService.parse(text);
    if (!parsed) return null;
    const { name, args } = parsed;
    if (!trustAtLeast(ctx.trust, TrustLevel.MEMBER) && !GUEST_COMMANDS.has(name)) {
      return { reply: 'Only /help and /whoami are available to you.' };
    }
    try {
      return await this.dispatch(ctx, session, name, args, text);
    } catch (err) {
      if (err instanceof AppError) return { reply: `⚠️ ${err.message}` };
      throw err;
    }
  }

  private async dispatch(ctx: Ctx, session: Session, name: string, args: string[], raw: string): Promise<CommandResult> {
    switch (name) {
      case 'help':
      case 'start':
        return { reply: this.help(ctx) };
      case 'whoami':
        return { reply: await this.whoami(ctx, session) };
      case 'status':
        return { reply: await this.status(ctx, session) };
      case 'new':
      case 'clear':
      case 'reset':
        return this.newSession(ctx, session);
      case 'stop': {
        const stopped = await this.deps.scheduler.requestAbort(session.id, '/stop');
        return { reply: stopped ? 'Stopping the running turn.' : 'Nothing is running.' };
      }
      case 'usage':
        return { reply: await this.usageText(ctx, session) };
      case 'tools': {
        const tools = (await this.deps.tools.describeFor(ctx, session.channel)).filter((t) => t.usable);
        return { reply: tools.length ? ['Tools you may use here:', ...tools.map((t) => `• ${t.name} — ${t.description}`)].join('\n') : 'No tools are available to you here.' };
      }
      case 'approve': {
        for (const ext of this.extensions.filter((e) => e.names.includes('approve'))) {
          if (trustAtLeast(ctx.trust, ext.minTrust)) {
            const result = await ext.run(ctx, session, args, raw);
            if (result) return result;
          }
        }
        return this.approve(ctx, args);
      }
      default: {
        const ext = this.extensions.find((e) => e.names.includes(name));
        if (ext) {
          if (!trustAtLeast(ctx.trust, ext.minTrust)) return { reply: `/${name} needs ${ext.minTrust} trust.` };
          const result = await ext.run(ctx, session, args, raw);
          if (result) return result;
        }
        return { reply: `Unknown command /${name}.\n${this.help(ctx)}` };
      }
    }
  }

  private help(ctx: Ctx): string {
    if (!trustAtLeast(ctx.trust, TrustLevel.MEMBER)) return 'Commands: /help, /whoami';
    const lines = [
      '/help — this list',
      '/whoami — who you are to me',
      '/status — model, context use, tokens, queue',
      '/new (/clear, /reset) — start a new session',
      '/stop — stop the running turn',
      '/usage — tokens used in this session',
      '/tools — tools you may use',
      '/approve <id> allow_once|allow_always|deny — decide a tool approval',
      ...this.extensions.filter((e) => trustAtLeast(ctx.trust, e.minTrust)).map((e) => e.help),
    ];
    return ['Commands:', ...lines].join('\n');
  }

  private async whoami(ctx: Ctx, session: Session): Promise<string> {
    const userId = ctx.userId;
    if (!userId) return 'I do not know you yet.';
    const user = await this.deps.users.get(ctx, userId);
    const [identities] = await this.deps.users.identitiesOf(ctx, [userId]);
    return [
      `You are ${user.displayName} (${user.id})`,
      `Trust: ${user.trust}`,
      `Identities: ${identities!.map((i) => i.key).join(', ') || '(none)'}`,
      `Session: ${session.key}`,
    ].join('\n');
  }

  private async status(ctx: Ctx, session: Session): Promise<string> {
    const info = this.deps.models.info('main');
    const totals = await this.deps.usage.sessionTotals(ctx, session.id);
    const running = await this.deps.scheduler.isRunning(session.id);
    const used = totals.inputTokens ? Math.round((100 * Math.min(totals.inputTokens / Math.max(totals.calls, 1), info.contextWindow)) / info.contextWindow) : 0;
    return [
      `Model: ${info.provider}/${info.model}${info.usingMock ? ' (mock provider: no model is configured)' : ''}`,
      `Context: ~${used}% of ${info.contextWindow} tokens per call`,
      `Tokens this session: ${totals.inputTokens} in, ${totals.outputTokens} out, ${totals.cacheReadTokens} cached`,
      `Session: ${session.key} — ${session.messageCount} messages`,
      `Turn running: ${running ? 'yes' : 'no'}; messages waiting: ${Math.max(0, (await this.deps.pendingMessages(ctx, session.id)) - (running ? 1 : 0))}`,
    ].join('\n');
  }

  private async newSession(ctx: Ctx, session: Session): Promise<CommandResult> {
    const { session: next } = await this.deps.rotation.rotate(ctx, session, 'new', { stopTurn: 'a new session was started' });
    return { reply: 'Started a new session. The old one is archived.', session: next };
  }

  private async usageText(ctx: Ctx, session: Session): Promise<string> {
    const t = await this.deps.usage.sessionTotals(ctx, session.id);
    const cost = t.calls > t.unpricedCalls ? `, ${formatCost(t.costUsd)}${t.unpricedCalls ? ` (${t.unpricedCalls} calls of models without a price not counted)` : ''}` : '';
    const lines = [`This session: ${t.calls} model calls, ${t.inputTokens} input tokens, ${t.outputTokens} output tokens, ${t.cacheReadTokens} cache reads${t.estimated ? ' (partly estimated)' : ''}${cost}.`];
    if (this.deps.budgets && ctx.userId) lines.push(await this.deps.budgets.describe(ctx, ctx.userId));
    return lines.join('\n');
  }

  private async approve(ctx: Ctx, args: string[]): Promise<CommandResult> {
    const [id, decisionText] = args;
    const decision = decisionText ? DECISIONS[decisionText.toLowerCase()] : undefined;
    if (!id || !decision) return { reply: 'Usage: /approve <approval-id> allow_once|allow_always|deny' };
    const result = await this.deps.approvals.decide(ctx, id, decision);
    return { reply: `Approval ${id} for ${result.tool}: ${result.status}.` };
  }
}
