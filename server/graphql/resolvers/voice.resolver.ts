import { Arg, Authorized, Ctx as GqlCtx, Field, Float, ID, InputType, Mutation, Resolver } from 'type-graphql';
import { MaxLength } from '../validators';
import { TrustLevel } from '../../common/trust';
import { ChatClient } from '../../channels/web/session-stream-transport';
import type { WebVoiceNotes } from '../../channels/web/web-voice';
import type { GraphQLContext } from '../context';
import { Turn } from './chat.resolver';

@InputType({ description: 'A recorded voice note (e.g. from MediaRecorder) for the web chat.' })
class VoiceNoteInput {
  @Field(() => ID, { nullable: true, description: 'One of your ACTIVE sessions; default your active session of the channel.' })
  sessionId?: string | null;

  @Field(() => ChatClient, { nullable: true, defaultValue: ChatClient.WEB, description: 'WEB (default) or TUI.' })
  channel?: ChatClient | null;

  @Field({ description: 'audio/webm, audio/ogg, audio/mp4, audio/mpeg, audio/wav or audio/flac (codec parameters allowed).' })
  @MaxLength(100)
  mimeType!: string;

  @Field({ description: 'Base64 of the recording (at most voice.max_bytes; the request body limit applies too).' })
  dataBase64!: string;

  @Field(() => Float, { nullable: true, description: 'Length the client measured, in seconds.' })
  durationSeconds?: number | null;
}

/** Voice notes from the web chat: transcribed on the voice queue, then answered like a typed message. */
@Resolver()
export class VoiceResolver {
  constructor(private readonly voice: WebVoiceNotes) {}

  @Authorized(TrustLevel.MEMBER)
  @Mutation(() => Turn, {
    description: 'Sends a voice note: status TRANSCRIBING while it is transcribed (the transcript then arrives as MessageAdded with voiceSeconds), or REFUSED with the reason in reply (too long, unreadable, voice notes not set up).',
  })
  sendVoiceNote(@Arg('input') input: VoiceNoteInput, @GqlCtx() { ctx }: GraphQLContext): Promise<Turn> {
    return this.voice.send(ctx, input, input.channel ?? ChatClient.WEB);
  }
}
