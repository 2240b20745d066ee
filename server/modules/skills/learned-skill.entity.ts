import { Column, Entity, Index } from 'typeorm';
import { Field, ObjectType } from 'type-graphql';
import { BaseRecord } from '../../persistence/base.entity';
import { TrustLevel } from '../../common/trust';

/** A skill synced from plugins/skills/<name>/SKILL.md. */
@ObjectType('Skill', { description: 'A skill synced from plugins/skills/<name>/SKILL.md (skills.dir).' })
@Entity('learned_skills')
export class LearnedSkill extends BaseRecord {
  @Field()
  @Index({ unique: true })
  @Column({ type: 'varchar', length: 100 })
  name!: string;

  @Field()
  @Column({ type: 'text' })
  description!: string;

  @Field(() => String, { nullable: true })
  @Column({ type: 'text', nullable: true })
  readWhen!: string | null;

  @Field(() => TrustLevel)
  @Column({ type: 'varchar', length: 16 })
  minTrust!: TrustLevel;

  /** Channels the skill is active on; empty means all. */
  @Field(() => [String])
  @Column({ type: 'simple-json' })
  channels!: string[];

  @Field({ description: 'Off: never injected (setSkillEnabled); per channel: plugin setting skill:<name>.' })
  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  @Field({ description: 'The procedure the model reads (the Markdown body of SKILL.md).' })
  @Column({ type: 'text' })
  body!: string;

  @Column({ type: 'varchar', length: 64 })
  contentHash!: string;

  @Field(() => Date, { nullable: true, description: 'When a sync last read the file (null before the first sync that saw it).' })
  @Column({ type: Date, nullable: true })
  syncedAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'Why the file did not parse at the last sync (its last good version stays in use); null when it parsed.' })
  @Column({ type: 'text', nullable: true })
  syncError!: string | null;
}
