import { Column, Entity, Index, JoinColumn, ManyToOne, type Relation } from 'typeorm';
import { BaseRecord } from '../../persistence/base.entity';
import { User } from '../users';

/** What a stored credential holds. */
export type McpCredentialKind = 'headers' | 'oauth';

/**
 * One user's credential for one MCP server: their own headers (`auth: per_user`) or their OAuth client,
 * tokens and pending sign-in (`auth: oauth`), sealed with the SecretBox. Only that user's calls use it.
 */
@Entity('mcp_credentials')
@Index(['serverName', 'userId'], { unique: true })
export class McpCredential extends BaseRecord {
  @Column({ type: 'varchar', length: 32 })
  serverName!: string;

  @Index()
  @Column({ type: 'varchar', length: 36 })
  userId!: string;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'userId' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 16 })
  kind!: McpCredentialKind;

  @Column({ type: 'text' })
  sealed!: string;
}
