import type { OutputStream } from '../cli-io';

/** How the assistant's text is introduced at the start of a line. */
export const ASSISTANT_PREFIX = 'muninn> ';
/** The input prompt. */
export const USER_PROMPT = 'you> ';

/** One line, at most `max` characters, for summaries of tool results and errors. */
function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * Writes the conversation to a plain text stream (a terminal or a pipe; no cursor tricks): streamed
 * reply text as it arrives without a newline until something else needs a line, one line per tool call
 * (`⚙ current_time … ok`, completed on the same line when nothing came in between), notices and
 * turn-status lines. It tracks only whether the cursor is at the start of a line.
 */
export class Transcript {
  private atLineStart = true;
  private replyOpen = false;
  private openTool: string | null = null;

  constructor(private readonly out: OutputStream) {}

  /** Whether something was written since the last line break. */
  get midLine(): boolean {
    return !this.atLineStart;
  }

  /** Ends the current line, if any. */
  breakLine(): void {
    if (!this.atLineStart) this.out.write('\n');
    this.atLineStart = true;
    this.replyOpen = false;
    this.openTool = null;
  }

  /** A complete line (or several) of its own. */
  line(text: string): void {
    this.breakLine();
    this.out.write(`${text}\n`);
  }

  /** Raw text at the cursor (prompts, echoed input); `text` decides where the line ends. */
  raw(text: string): void {
    if (!text) return;
    this.out.write(text);
    this.atLineStart = text.endsWith('\n');
    this.replyOpen = false;
    this.openTool = null;
  }

  /** A piece of the assistant's reply; the first piece after anything else starts a `muninn> ` line. */
  replyText(text: string): void {
    if (!text) return;
    if (!this.replyOpen) {
      this.breakLine();
      this.out.write(ASSISTANT_PREFIX);
      this.replyOpen = true;
    }
    this.out.write(text);
    this.atLineStart = text.endsWith('\n');
  }

  toolStarted(callId: string, tool: string): void {
    this.breakLine();
    this.out.write(`⚙ ${tool} …`);
    this.atLineStart = false;
    this.openTool = callId;
  }

  toolFinished(callId: string, tool: string, outcome: string | null, summary: string | null): void {
    const result = outcome ?? 'done';
    const detail = result !== 'ok' && summary ? ` (${oneLine(summary)})` : '';
    if (this.openTool === callId) {
      this.out.write(` ${result}${detail}\n`);
      this.atLineStart = true;
      this.openTool = null;
      return;
    }
    this.line(`⚙ ${tool} … ${result}${detail}`);
  }

  notice(level: string, text: string): void {
    this.line(`${level === 'info' ? 'ℹ' : '⚠'} ${text}`);
  }

  /** The end of a turn: closes the line, and says why when it did not end normally. */
  turnEnded(status: string, error: string | null): void {
    if (status === 'cancelled') this.line('✖ turn cancelled');
    else if (status === 'failed') this.line(`✖ turn failed${error ? `: ${oneLine(error, 300)}` : ''}`);
    else this.breakLine();
  }
}
