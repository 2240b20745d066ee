import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline';
import type { Writable } from 'node:stream';
import { assertNever } from '../../common/assert-never';
import type { OutputStream } from '../cli-io';
import { ChatApiError, ServerUnreachableError, type ChatApi } from './chat-api';
import type { ChatEvent, SentTurn } from './chat-events';
import type { InputHistory } from './input-history';
import { SessionFeed, type SessionFeedOptions } from './session-feed';
import { Transcript, USER_PROMPT } from './transcript';

/** Where SIGINT comes from when it is a signal, not a key (a pipe, `kill -INT`): `process`, or a fake. */
export interface SignalSource {
  on(event: 'SIGINT', listener: () => void): unknown;
  off(event: 'SIGINT', listener: () => void): unknown;
}

/** The streams of one chat. */
export interface ChatTerminal {
  input: NodeJS.ReadableStream;
  /** The conversation: prompt, replies, tool lines, notices. With `terminal`, a TTY Writable. */
  output: OutputStream;
  /** Diagnostics: failed requests, connection lost and restored. */
  errors: OutputStream;
  /** readline's terminal mode (line editing, history, Ctrl-C as a key); only when input and output are TTYs. */
  terminal: boolean;
  signals: SignalSource;
}

export interface ChatSessionOptions {
  api: Pick<ChatApi, 'sendMessage' | 'stopTurn' | 'createSocketClient'>;
  /** Persisted input history (terminal mode only); null keeps none. */
  history: InputHistory | null;
  feed?: SessionFeedOptions;
}

/** A followed turn: one that answers a message this client sent. */
interface TurnView {
  /** Reply text was streamed for it. */
  streamed: boolean;
  /** The stored reply (MessageAdded), printed at the end when nothing was streamed. */
  final: string | null;
}

/** The message the client waits on; lines typed meanwhile wait in the queue. */
interface Waiting {
  messageId: string;
  sessionId: string;
  turnId: string | null;
  /** none → requested (stopTurn in flight) → sent, or pending (the turn had not started: stop it when it does). */
  stop: 'none' | 'requested' | 'pending' | 'sent';
  resolve(): void;
}

/**
 * One `muninn chat` conversation (DESIGN §4; issue 4, TUI). Reads lines, sends each with `sendMessage`
 * (channel TUI, so the server picks the user's `tui:<userId>` session), prints an immediate answer (slash
 * commands) or follows the session's events until the message's turn finishes, then prompts again; lines
 * typed meanwhile are sent in order afterwards. Only turns that answer this client's messages are shown,
 * so replaying the session's kept events on (re)subscription shows nothing old. The session followed is
 * the one the last Turn named; `SessionRotated` (e.g. `/new`) moves it.
 *
 * Ctrl-C (the key in a terminal, SIGINT otherwise) during a turn calls `stopTurn` once; a second one, one
 * while idle, or the end of input in a terminal (Ctrl-D) resolves `run()` with 0. A piped input that ends
 * is answered to the last line first.
 */
export class ChatSession {
  private readonly transcript: Transcript;
  private rl: Interface | null = null;
  private socket: ReturnType<ChatApi['createSocketClient']> | null = null;
  private feed: SessionFeed | null = null;
  private sessionId: string | null = null;
  private readonly mine = new Set<string>();
  private readonly turns = new Map<string, TurnView>();
  private waiting: Waiting | null = null;
  /** Events that arrive while a sendMessage is in flight wait until its message id is known. */
  private held: ChatEvent[] | null = null;
  /** Ctrl-C came while sendMessage was in flight: stop the turn once it is known. */
  private stopWhenSent = false;
  private readonly queue: string[] = [];
  private pumping = false;
  private inputClosed = false;
  private promptShown = false;
  private finished = false;
  private historyWarned = false;
  private resolveRun: (code: number) => void = () => undefined;

  constructor(
    private readonly term: ChatTerminal,
    private readonly options: ChatSessionOptions,
  ) {
    this.transcript = new Transcript(term.output);
  }

  /** Runs until the user leaves; resolves with the exit code (0). */
  run(): Promise<number> {
    const done = new Promise<number>((resolve) => (this.resolveRun = resolve));
    const { term, options } = this;
    const history = term.terminal ? options.history : null;
    const rl = createInterface({
      input: term.input,
      output: term.terminal ? (term.output as Writable) : undefined,
      terminal: term.terminal,
      prompt: USER_PROMPT,
      history: history?.load() ?? [],
      historySize: history?.size ?? 0,
      removeHistoryDuplicates: true,
    });
    this.rl = rl;
    rl.on('line', (line) => {
      this.queue.push(line);
      void this.pump();
    });
    rl.on('close', () => this.inputEnded());
    rl.on('SIGINT', this.interrupt);
    term.signals.on('SIGINT', this.interrupt);
    if (history) {
      rl.on('history', (lines: string[]) => {
        const problem = history.save(lines);
        if (problem && !this.historyWarned) {
          this.historyWarned = true;
          this.note(`⚠ cannot save the input history to ${history.file}: ${problem}`);
        }
      });
    }
    this.showPrompt();
    return done;
  }

  // === Input

  private showPrompt(): void {
    if (this.finished) return;
    this.promptShown = true;
    if (this.term.terminal) this.rl?.prompt();
    else this.transcript.raw(USER_PROMPT);
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (!this.finished && this.queue.length) {
        const line = this.queue.shift()!;
        // A pipe does not echo: write the line after its prompt, so the output reads as a transcript.
        if (!this.term.terminal) this.transcript.raw(`${this.promptShown ? '' : USER_PROMPT}${line}\n`);
        this.promptShown = false;
        await this.send(line);
      }
    } finally {
      this.pumping = false;
    }
    if (this.finished) return;
    if (this.inputClosed) this.exit(0);
    else this.showPrompt();
  }

  private inputEnded(): void {
    this.inputClosed = true;
    if (this.finished) return;
    // Ctrl-D in a terminal leaves at once; a pipe that ends is answered to its last line first.
    if (this.term.terminal || (!this.pumping && !this.queue.length)) this.exit(0);
  }

  /** Ctrl-C: stop the running turn, or leave. */
  private readonly interrupt = (): void => {
    if (this.finished) return;
    const w = this.waiting;
    if (w && w.stop === 'none') {
      this.transcript.line('stopping…');
      void this.requestStop(w);
      return;
    }
    if (this.held && !this.stopWhenSent) {
      this.transcript.line('stopping…');
      this.stopWhenSent = true;
      return;
    }
    this.exit(0);
  };

  private exit(code: number): void {
    if (this.finished) return;
    this.finished = true;
    if (this.term.terminal && this.promptShown) this.term.output.write('\n');
    else this.transcript.breakLine();
    this.term.signals.off('SIGINT', this.interrupt);
    this.rl?.off('SIGINT', this.interrupt);
    this.rl?.close();
    this.feed?.stop();
    this.socket?.terminate();
    this.waiting?.resolve();
    this.resolveRun(code);
  }

  // === Sending

  private async send(line: string): Promise<void> {
    const text = line.trim();
    if (!text) return;
    this.held = [];
    let turn: SentTurn;
    try {
      turn = await this.options.api.sendMessage(text);
    } catch (err) {
      this.release();
      this.stopWhenSent = false;
      this.reportError(err);
      return;
    }
    const waits = !!turn.messageId && !turn.duplicate && (turn.status === 'QUEUED' || turn.status === 'PROCESSING');
    if (waits) this.mine.add(turn.messageId!);
    const wait = waits ? new Promise<void>((resolve) => (this.waiting = { messageId: turn.messageId!, sessionId: turn.sessionId, turnId: null, stop: 'none', resolve })) : null;
    this.release();
    if (this.finished) return;
    this.follow(turn.sessionId);
    if (turn.reply) this.transcript.line(turn.reply);
    if (turn.duplicate) this.transcript.line('ℹ this message was already received');
    const stop = this.stopWhenSent;
    this.stopWhenSent = false;
    if (stop && this.waiting) void this.requestStop(this.waiting);
    if (wait) await wait;
    this.waiting = null;
  }

  /** Handles the events held while sendMessage ran, then lets new ones through. */
  private release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const e of held) this.handle(e);
  }

  private async requestStop(w: Waiting): Promise<void> {
    w.stop = 'requested';
    const turnBefore = w.turnId;
    let stopped: boolean;
    try {
      stopped = await this.options.api.stopTurn(w.sessionId);
    } catch (err) {
      // Not retried: the next Ctrl-C leaves, also when the server is gone.
      w.stop = 'sent';
      this.reportError(err);
      return;
    }
    if (stopped || this.waiting !== w) w.stop = 'sent';
    else if (w.turnId === null) w.stop = 'pending'; // still queued: stopped as soon as it starts
    else if (turnBefore === null) void this.requestStop(w); // it started while we asked
    else w.stop = 'sent';
  }

  // === Events

  /** Follows `sessionId` (no-op when already following it). */
  private follow(sessionId: string): void {
    if (this.finished || (this.sessionId === sessionId && this.feed)) return;
    this.feed?.stop();
    this.sessionId = sessionId;
    this.turns.clear();
    this.socket ??= this.options.api.createSocketClient();
    this.feed = new SessionFeed(
      this.socket.client,
      sessionId,
      {
        event: (e) => {
          if (this.sessionId !== sessionId || this.finished) return;
          if (this.held) this.held.push(e);
          else this.handle(e);
        },
        connection: (state, detail) => this.note(state === 'lost' ? `⚠ lost the connection to the server (${detail}); reconnecting…` : `ℹ reconnected; ${detail}`),
        refused: (message, code) => {
          if (this.sessionId !== sessionId) return;
          this.feed = null;
          this.note(`✖ cannot follow the session: ${message}${code ? ` (${code})` : ''}`);
          this.waiting?.resolve();
        },
      },
      this.options.feed,
    ).start();
  }

  private handle(e: ChatEvent): void {
    const t = this.transcript;
    switch (e.type) {
      case 'TurnStarted': {
        if (!e.messageIds.some((id) => this.mine.has(id))) return;
        this.turns.set(e.turnId, { streamed: false, final: null });
        const w = this.waiting;
        if (w && e.messageIds.includes(w.messageId)) {
          w.turnId = e.turnId;
          if (w.stop === 'pending') void this.requestStop(w);
        }
        return;
      }
      case 'ReplyDelta': {
        const view = this.turns.get(e.turnId);
        if (!view || !e.text) return;
        view.streamed = true;
        t.replyText(e.text);
        return;
      }
      case 'ToolCallEvent':
        if (!this.turns.has(e.turnId)) return;
        if (e.phase === 'started') t.toolStarted(e.callId, e.tool);
        else t.toolFinished(e.callId, e.tool, e.outcome, e.summary);
        return;
      case 'MessageAdded': {
        const view = [...this.turns.values()].at(-1);
        if (view && e.role === 'ASSISTANT') view.final = e.content;
        return;
      }
      case 'TurnFinished': {
        const view = this.turns.get(e.turnId);
        if (!view) return;
        this.turns.delete(e.turnId);
        if (e.status === 'done' && !view.streamed && view.final) t.replyText(view.final);
        t.turnEnded(e.status, e.error);
        if (this.waiting?.turnId === e.turnId) this.waiting.resolve();
        return;
      }
      case 'Notice':
        // Only notices within this client's turns ("Turn stopped", approvals); older ones are replays,
        // and direct answers already came back as the Turn's reply.
        if (this.turns.size) t.notice(e.level, e.text);
        return;
      case 'SessionRotated':
        if (e.previousSessionId !== this.sessionId) return;
        if (this.waiting) {
          t.line(`ℹ the session was rotated (${e.reason}); continuing in the new one`);
          this.waiting.resolve();
        }
        this.follow(e.newSessionId);
        return;
      default:
        assertNever(e, 'session event');
    }
  }

  // === Diagnostics

  /** A line on the error stream, kept clear of a half-written reply or the prompt in a terminal. */
  private note(line: string): void {
    if (this.finished) return;
    if (!this.term.terminal) {
      this.term.errors.write(`${line}\n`);
      return;
    }
    const out = this.term.output as Writable;
    if (this.promptShown) {
      clearLine(out, 0);
      cursorTo(out, 0);
    } else {
      this.transcript.breakLine();
    }
    this.term.errors.write(`${line}\n`);
    if (this.promptShown) this.rl?.prompt(true);
  }

  private reportError(err: unknown): void {
    if (err instanceof ServerUnreachableError) this.note(`✖ ${err.message}; is the server running?`);
    else if (err instanceof ChatApiError) this.note(`✖ ${err.message}${err.code ? ` (${err.code})` : ''}`);
    else this.note(`✖ ${(err as Error)?.message ?? String(err)}`);
  }
}
