import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { TrustLevel } from './trust';
import type { Logger } from './logger';

/** Who is acting: a user with a trust level, or the system itself (jobs, CLI, startup). */
export type Actor =
  | { kind: 'user'; userId: string; trust: TrustLevel; tokenId?: string }
  | { kind: 'system'; reason: string }
  | { kind: 'anonymous' };

export interface CtxInit {
  actor: Actor;
  logger: Logger;
  requestId?: string;
  channel?: string;
  signal?: AbortSignal;
  manager?: EntityManager;
}

/** Serializable part of a Ctx, carried in job payloads. */
export interface SerializedCtx {
  actor: Actor;
  requestId: string;
  channel?: string;
}

/**
 * Request context passed first to every service method: who acts, where, a namespaced logger, an abort
 * signal and, inside a transaction, the entity manager to use.
 */
export class Ctx {
  readonly actor: Actor;
  readonly logger: Logger;
  readonly requestId: string;
  readonly channel?: string;
  readonly signal?: AbortSignal;
  readonly manager?: EntityManager;

  constructor(init: CtxInit) {
    this.actor = init.actor;
    this.logger = init.logger;
    this.requestId = init.requestId ?? randomUUID();
    this.channel = init.channel;
    this.signal = init.signal;
    this.manager = init.manager;
  }

  /** A context for work the server does on its own behalf (jobs, CLI, startup). */
  static system(logger: Logger, reason: string): Ctx {
    return new Ctx({ actor: { kind: 'system', reason }, logger: logger.child({ system: reason }) });
  }

  /**
   * The same request acted on by the server itself (for work done on a user's behalf whatever their
   * trust, such as writing the memories of their exchange).
   */
  asSystem(reason: string): Ctx {
    return new Ctx({ ...this.init(), actor: { kind: 'system', reason } });
  }

  /** The same context bound to a transaction's entity manager. */
  withManager(manager: EntityManager): Ctx {
    return new Ctx({ ...this.init(), manager });
  }

  /** Trust of the actor; the system acts as OWNER, an anonymous caller as BLOCKED. */
  get trust(): TrustLevel {
    switch (this.actor.kind) {
      case 'user':
        return this.actor.trust;
      case 'system':
        return TrustLevel.OWNER;
      case 'anonymous':
        return TrustLevel.BLOCKED;
    }
  }

  /** The acting user's id, or null for system and anonymous actors. */
  get userId(): string | null {
    return this.actor.kind === 'user' ? this.actor.userId : null;
  }

  serialize(): SerializedCtx {
    return { actor: this.actor, requestId: this.requestId, channel: this.channel };
  }

  static deserialize(data: SerializedCtx, logger: Logger, signal?: AbortSignal): Ctx {
    return new Ctx({ ...data, logger: logger.child({ requestId: data.requestId }), signal });
  }

  private init(): CtxInit {
    return {
      actor: this.actor,
      logger: this.logger,
      requestId: this.requestId,
      channel: this.channel,
      signal: this.signal,
      manager: this.manager,
    };
  }
}
