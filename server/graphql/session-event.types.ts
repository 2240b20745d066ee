import { createUnionType, Field, Int, ObjectType } from 'type-graphql';
import type { SessionEvent } from '../modules/events';

@ObjectType()
abstract class SessionEventBase {
  @Field(() => Int, { description: 'Per-session sequence number; reconnect with afterSeq to miss nothing.' })
  seq!: number;

  @Field()
  sessionId!: string;

  @Field(() => String, { description: 'ISO time of the event.' })
  at!: string;
}

@ObjectType()
export class TurnStarted extends SessionEventBase {
  @Field()
  turnId!: string;

  @Field(() => [String])
  messageIds!: string[];
}

@ObjectType()
export class ReplyDelta extends SessionEventBase {
  @Field()
  turnId!: string;

  @Field()
  text!: string;
}

@ObjectType()
export class ToolCallEvent extends SessionEventBase {
  @Field()
  turnId!: string;

  @Field()
  callId!: string;

  @Field()
  tool!: string;

  @Field({ description: 'started or finished' })
  phase!: string;

  @Field(() => String, { nullable: true, description: 'ok, error, refused, denied, timeout or invalid (when finished).' })
  outcome?: string | null;

  @Field(() => String, { nullable: true })
  summary?: string | null;
}

@ObjectType()
export class MessageAdded extends SessionEventBase {
  @Field()
  messageId!: string;

  @Field()
  role!: string;

  @Field()
  content!: string;

  @Field(() => Int, { nullable: true, description: 'Set when the message is the transcript of a voice note: its length in seconds.' })
  voiceSeconds?: number | null;
}

@ObjectType()
export class TurnFinished extends SessionEventBase {
  @Field()
  turnId!: string;

  @Field({ description: 'done, failed or cancelled' })
  status!: string;

  @Field(() => String, { nullable: true })
  replyMessageId?: string | null;

  @Field(() => String, { nullable: true })
  error?: string | null;

  @Field(() => String, { nullable: true, description: 'Why a failed turn failed, as an error code clients can act on (BUDGET_EXCEEDED); null otherwise.' })
  errorCode?: string | null;
}

@ObjectType()
export class SessionRotated extends SessionEventBase {
  @Field()
  previousSessionId!: string;

  @Field()
  newSessionId!: string;

  @Field()
  reason!: string;
}

@ObjectType({ description: 'What sent a notice on the server\'s own initiative.' })
export class NoticeOrigin {
  @Field({ description: 'beat: the result of a beat\'s run.' })
  kind!: string;

  @Field({ description: 'The beat\'s id.' })
  id!: string;

  @Field({ description: 'The beat\'s name.' })
  name!: string;
}

@ObjectType()
export class Notice extends SessionEventBase {
  @Field()
  level!: string;

  @Field()
  text!: string;

  @Field(() => NoticeOrigin, { nullable: true, description: 'Set when a beat sent it (its result), so the chat can say which.' })
  origin?: NoticeOrigin | null;
}

const MEMBERS = { TurnStarted, ReplyDelta, ToolCallEvent, MessageAdded, TurnFinished, SessionRotated, Notice } as const;

export const SessionEventUnion = createUnionType({
  name: 'SessionEvent',
  description: 'Everything that happens in a session, in seq order.',
  types: () => [TurnStarted, ReplyDelta, ToolCallEvent, MessageAdded, TurnFinished, SessionRotated, Notice] as const,
  resolveType: (value) => MEMBERS[(value as unknown as SessionEvent).type],
});
