import { Column, Entity, Index } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';

/**
 * On/off for a tool or channel, globally (`channel` null) or for one tool on one channel. The most
 * specific row wins.
 */
@ObjectType()
@Entity('plugin_settings')
@Index(['plugin', 'channel'], { unique: true })
export class PluginSetting extends BaseRecord {
  /** Tool or channel name, e.g. `http_request` or `channel:telegram`. */
  @Field()
  @Column({ type: 'varchar', length: 100 })
  plugin!: string;

  /** Channel the setting applies to; null applies everywhere. */
  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 32, nullable: true })
  channel!: string | null;

  @Field()
  @Column({ type: 'boolean' })
  enabled!: boolean;
}
