/**
 * What a per-process copy of rows can be about; a change of any row of a topic drops every copy of it.
 * `users`: users, their API tokens and their budgets. `plugins`: plugin settings. `skills`: learned
 * skills. `memory`: the memory search index.
 */
export type ChangeTopic = 'users' | 'plugins' | 'skills' | 'memory';

export const CHANGE_TOPICS: readonly ChangeTopic[] = ['users', 'plugins', 'skills', 'memory'];

/** Port: carries changes between the processes that share a database (Redis pub/sub). */
export interface ChangeTransport {
  /** Whether other processes' changes reach this process now. */
  readonly live: boolean;
  publish(topic: ChangeTopic): void;
  /** `fn(topic)` for each change of another process; `fn(null)` when changes may have been missed. */
  listen(fn: (topic: ChangeTopic | null) => void): void;
}

/**
 * The changes of one process's database (see ChangeCache): a writer announces a topic after its
 * transaction committed, this process's copies are dropped at once and, through the transport, the other
 * processes' too. Without a transport the process is taken to be the database's only writer.
 */
export class ChangeFeed {
  private readonly listeners: Array<(topic: ChangeTopic | null) => void> = [];
  private transport: ChangeTransport | null = null;

  /** Whether copies may be kept now: always without a transport, else while it hears the others. */
  get live(): boolean {
    return this.transport ? this.transport.live : true;
  }

  changed(topic: ChangeTopic): void {
    this.emit(topic);
    this.transport?.publish(topic);
  }

  onChange(fn: (topic: ChangeTopic | null) => void): void {
    this.listeners.push(fn);
  }

  /**
   * A number that grows whenever rows of `topic` change (or may have): a copy read at one value is current
   * while it stays. While the feed is not live it differs at every call, so nothing read then is kept.
   */
  generationOf(topic: ChangeTopic): () => number {
    let generation = 0;
    this.onChange((changed) => {
      if (changed === null || changed === topic) generation += 1;
    });
    return () => (this.live ? generation : ++generation);
  }

  /** From now on changes also go to and come from the other processes. */
  connect(transport: ChangeTransport): void {
    this.transport = transport;
    transport.listen((topic) => this.emit(topic));
    this.emit(null);
  }

  private emit(topic: ChangeTopic | null): void {
    for (const fn of this.listeners) fn(topic);
  }
}
