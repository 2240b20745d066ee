import { Field, ObjectType } from 'type-graphql';
import { TrustLevel } from '../../common/trust';
import type { ToolDescription } from './tool-registry';

/** A tool as the `tools` query shows it. */
@ObjectType({ description: 'A tool the model may call, with its trust floor and activation on a channel.' })
export class ToolInfo implements ToolDescription {
  @Field()
  name!: string;

  @Field()
  description!: string;

  @Field(() => TrustLevel, { description: 'Lowest trust that may use the tool (never below MEMBER).' })
  minTrust!: TrustLevel;

  @Field({ description: 'Calls pause until an OWNER (or an ADMIN, for tools below OWNER) approves.' })
  requiresApproval!: boolean;

  @Field({ description: 'Active on the channel asked about (plugin settings, else the tool default).' })
  enabled!: boolean;

  @Field({ description: 'Enabled and your trust is high enough.' })
  usable!: boolean;
}
