import { Field, ID, ObjectType } from 'type-graphql';
import { MessageStatus } from '../sessions';

/**
 * One accepted call of a webhook, read from the message it stored in the hook's `hook:<name>` session:
 * when it came, how far its turn got, and where to read the turn.
 */
@ObjectType({ description: 'One accepted call of a webhook and the turn it started.' })
export class WebhookDelivery {
  @Field(() => ID, { description: 'The stored message of the call.' })
  id!: string;

  @Field(() => Date)
  receivedAt!: Date;

  @Field(() => MessageStatus, { description: 'QUEUED or PROCESSING while the turn waits or runs; DONE, FAILED or CANCELLED after.' })
  status!: MessageStatus;

  @Field(() => String, { nullable: true })
  turnId!: string | null;

  @Field({ description: 'The hook:<name> session the turn ran in.' })
  sessionId!: string;
}
