import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { Ctx } from '../../server/common/ctx';
import { TrustLevel } from '../../server/common/trust';
import { ENTITIES } from '../../server/entities';
import { AuditService } from '../../server/modules/audit';
import { SessionLifecycleService, ChatKind, type Session } from '../../server/modules/sessions';
import { UserService, type User } from '../../server/modules/users';
import { openDatabase } from '../../server/persistence/data-source';
import { Db } from '../../server/persistence/db';
import { FakeClock } from './fakes/fake-clock';
import { LogCapture } from './log-capture';
import { testConfig } from './test-config';

/**
 * A real SQLite file (migrated, in a temporary folder) with the services every unit test of the chat
 * path needs: users, audit, session lifecycle on a FakeClock. No Redis, no queues.
 */
export class SqliteWorld {
  readonly audit: AuditService;
  readonly users: UserService;
  readonly lifecycle: SessionLifecycleService;
  readonly clock = new FakeClock();
  readonly logs = new LogCapture();
  readonly logger = pino({ level: 'debug' }, this.logs);

  private constructor(
    readonly db: Db,
    readonly dir: string,
  ) {
    this.audit = new AuditService(db);
    this.users = new UserService(db, this.audit, TrustLevel.GUEST);
    this.lifecycle = new SessionLifecycleService(db, this.clock);
  }

  static async open(): Promise<SqliteWorld> {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'muninn-unit-'));
    const { dataSource } = await openDatabase(testConfig(dir), ENTITIES);
    return new SqliteWorld(new Db(dataSource), dir);
  }

  /** A context of the server acting on its own. */
  system(reason = 'test'): Ctx {
    return Ctx.system(this.logger, reason);
  }

  /** A context acting as `user`. */
  as(user: User): Ctx {
    return new Ctx({ actor: { kind: 'user', userId: user.id, trust: user.trust }, logger: this.logger });
  }

  async user(displayName: string, trust: TrustLevel, identity?: { channel: string; handle: string }): Promise<User> {
    const user = await this.users.create(this.system(), { displayName, trust });
    if (identity) await this.users.linkIdentity(this.system(), user.id, identity.channel, identity.handle);
    return user;
  }

  /** A new DM session of `user` on `channel`, with a chat of its own. */
  session(user: User, channel = 'telegram', chatId = `chat-${randomUUID().slice(0, 8)}`): Promise<Session> {
    return this.lifecycle.resolveActive(this.system(), { key: `${channel}:${chatId}:${user.id}`, userId: user.id, channel, chatId, chatKind: ChatKind.DM });
  }

  async close(): Promise<void> {
    await this.db.dataSource.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
