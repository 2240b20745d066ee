import { Column, Entity, Index } from 'typeorm';
import { BaseRecord } from '../../persistence/base.entity';

/**
 * An MCP server added or changed at run time (`upsertMcpServer`); it wins over a config entry of the same
 * name. The whole definition is sealed with the SecretBox, since `env` and `headers` carry secrets.
 */
@Entity('mcp_servers')
export class McpServerRecord extends BaseRecord {
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 32 })
  name!: string;

  /** `v1:…`: the definition as JSON, sealed. */
  @Column({ type: 'text' })
  sealedDefinition!: string;

  @Column({ type: 'varchar', length: 36, nullable: true })
  updatedById!: string | null;
}
