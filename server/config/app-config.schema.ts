import { z } from 'zod';
import { mcpConfigSchema } from './mcp.schema';
import { isTimeZone } from '../common/time-zone';

// === Sections
// Every key has a default and a description; `muninn.example.json` is generated from these defaults
// (`npm run config:example`) and a test fails when it drifts. Keys are snake_case as in DESIGN.md.

const queues = z
  .object({
    turn_concurrency: z.number().int().min(1).default(8).describe('Sessions whose turns run at once in one worker process.'),
    turn_lock_ms: z.number().int().min(1000).default(30000).describe('Lock of a session being answered; renewed while the turn runs, freed when a worker dies.'),
    stalled_interval_ms: z.number().int().min(1000).default(30000).describe('How often workers look for jobs of dead workers to run again.'),
    outbound_concurrency: z.number().int().min(1).default(4).describe('Deliveries at once per worker process (one chat is always served in order).'),
    outbound_attempts: z.number().int().min(1).default(8).describe('Delivery attempts of one reply before it is given up (with back-off).'),
  })
  .strict()
  .prefault({});

const trustLevel = z.enum(['BLOCKED', 'GUEST', 'MEMBER', 'TRUSTED', 'ADMIN', 'OWNER']);
const dmPolicy = z.enum(['pairing', 'open', 'allowlist', 'disabled']);
const groupPolicy = z.enum(['allowlist', 'open', 'disabled']);

const server = z
  .object({
    port: z.number().int().min(0).max(65535).default(4000).describe('HTTP port for /graphql, /healthz, /readyz (env PORT). 0 picks a free port.'),
    host: z.string().default('0.0.0.0').describe('Interface to listen on; 127.0.0.1 keeps the server local.'),
    body_limit_kb: z.number().int().min(1).default(1024).describe('Largest accepted request body in KiB; larger requests get 413.'),
    explorer: z.boolean().default(true).describe('Serve the offline GraphQL explorer at GET /graphql (turned off when NODE_ENV=production unless set).'),
  })
  .strict()
  .prefault({});

const graphql = z
  .object({
    max_depth: z.number().int().min(1).default(12).describe('Deepest allowed selection nesting (introspection is exempt).'),
    max_cost: z
      .number()
      .int()
      .min(1)
      .default(5000)
      .describe('Highest allowed query cost: each field counts 1, times the page size of every connection above it (`first`, 50 if absent, max_page_size for a variable); introspection is exempt.'),
    max_aliases: z.number().int().min(1).default(20).describe('Most aliases in one operation.'),
    max_tokens: z.number().int().min(1).default(5000).describe('Most lexical tokens in one operation document.'),
    max_page_size: z.number().int().min(1).default(200).describe('Largest `first` accepted by connections.'),
    public_introspection: z
      .boolean()
      .nullable()
      .default(null)
      .describe('Answer schema introspection without an API token; null: yes, except when NODE_ENV=production. With a token it is always answered.'),
    subscription_recheck_ms: z.number().int().min(100).default(10000).describe('How often a running subscription re-checks that its token and trust still allow it.'),
  })
  .strict()
  .prefault({});

const database = z
  .object({
    url: z.string().nullable().default(null).describe('postgres://… to use PostgreSQL (env DATABASE_URL); null uses SQLite in the data folder.'),
    sqlite_file: z.string().default('muninn.sqlite').describe('SQLite file name inside the data folder.'),
    busy_timeout_ms: z.number().int().min(0).default(5000).describe('How long SQLite waits for a lock before failing.'),
  })
  .strict()
  .prefault({});

const redis = z
  .object({
    url: z.string().nullable().default(null).describe('redis://… of an existing Redis (env REDIS_URL); null starts a managed redis-server.'),
    prefix: z.string().min(1).default('muninn').describe('Key prefix for queues and pub/sub, so several servers can share one Redis.'),
    managed_binary: z.string().default('redis-server').describe('Binary used for the managed Redis.'),
    managed_port: z.number().int().min(0).max(65535).default(0).describe('Port of the managed Redis; 0 picks a free one.'),
  })
  .strict()
  .prefault({});

const metrics = z
  .object({
    enabled: z.boolean().default(true).describe('Serve Prometheus metrics at GET /metrics.'),
    token: z.string().nullable().default(null).describe('Bearer token a scraper must send (env MUNINN_METRICS_TOKEN); null serves /metrics to loopback clients only.'),
  })
  .strict()
  .prefault({});

const log = z
  .object({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('Log level (env LOG_LEVEL).'),
    sensitive: z.boolean().default(false).describe('Log prompts and completions. Secrets are redacted either way.'),
  })
  .strict()
  .prefault({});

const provider = z
  .object({
    preset: z.enum(['ollama', 'openai', 'openrouter', 'nvidia', 'vllm', 'lmstudio', 'custom', 'mock']).default('custom').describe('Fills base_url and api_key_env from a known service.'),
    base_url: z.string().nullable().default(null).describe('OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1.'),
    api_key_env: z.string().nullable().default(null).describe('Name of the env variable that holds the API key.'),
    model: z.string().nullable().default(null).describe('Default model of this provider.'),
    context_window: z.number().int().min(512).default(8192).describe('Context window of the model in tokens.'),
    max_concurrency: z.number().int().min(1).default(1).describe('Parallel calls to this provider.'),
    timeout_ms: z.number().int().min(1000).default(120000).describe('Timeout of one model call.'),
    supports_tools: z.boolean().default(true).describe('Whether the model supports native tool calls.'),
    supports_vision: z.boolean().default(false).describe('Whether the model accepts images.'),
  })
  .strict();

const route = z
  .object({
    provider: z.string().describe('Name of a provider in ai.providers.'),
    model: z.string().nullable().default(null).describe('Model; null uses the provider default.'),
    fallbacks: z.array(z.object({ provider: z.string(), model: z.string().nullable().default(null) }).strict()).default([]).describe('Tried in order when the main route fails.'),
  })
  .strict();

const ai = z
  .object({
    background_grace_ms: z.number().int().min(0).default(5000).describe('Background model calls wait this long after the last interactive call.'),
    providers: z.record(z.string(), provider).default({}).describe('Named model providers. Empty: MUNINN_MODEL_BASE_URL, a local Ollama, or the mock provider.'),
    roles: z
      .object({
        main: route.nullable().default(null),
        summarizer: route.nullable().default(null),
        heartbeat: route.nullable().default(null),
        embeddings: route.nullable().default(null),
        transcribe: route.nullable().default(null).describe('Speech to text (POST <base_url>/audio/transcriptions, e.g. whisper-1); null: voice notes are not set up.'),
        speech: route.nullable().default(null).describe('Text to speech (POST <base_url>/audio/speech, e.g. tts-1); null: replies are text only.'),
      })
      .strict()
      .prefault({})
      .describe('Provider + model per agent role; null uses the first provider (transcribe and speech: null turns them off).'),
    system_prompt: z.string().default('You are Muninn, a helpful assistant. Be concise and accurate.').describe('System prompt of the main agent.'),
    max_iterations: z.number().int().min(1).max(50).default(10).describe('Most model calls in one turn (tool loop cap).'),
    max_retries: z.number().int().min(0).max(10).default(3).describe('Retries of a model call on 429/5xx/network errors.'),
  })
  .strict()
  .prefault({});

const session = z
  .object({
    queue_mode: z.enum(['followup', 'collect', 'interrupt']).default('followup').describe('What happens to messages that arrive while a turn runs.'),
    summarizer_mode: z.enum(['auto', 'manual']).default('auto').describe('auto: condense finished exchanges into memories in the background; manual: only the compaction safety valve.'),
    summarizer_batch: z.number().int().min(1).max(20).default(5).describe('auto: exchanges of a session condensed in one summarizer call (1: a call per exchange).'),
    summarizer_idle_seconds: z.number().int().min(0).max(86_400).default(120).describe('auto: a batch that is not full yet is condensed once its session has been quiet this long.'),
    compact_threshold: z.number().min(0.1).max(1).default(0.9).describe('Compact before a turn when estimated tokens reach this share of the context window.'),
    compact_keep_turns: z.number().int().min(0).max(20).default(2).describe('Most recent turns (user messages with their replies) copied into the new session by a compaction.'),
    dm_scope: z.enum(['per-user', 'main']).default('per-user').describe('main: OWNER identities share agent:main:main across channels.'),
    daily_reset_hour: z.number().int().min(0).max(23).nullable().default(null).describe('Hour (in reset_timezone) at which sessions rotate daily; null turns it off.'),
    reset_timezone: z
      .string()
      .nullable()
      .default(null)
      .refine((zone) => zone === null || isTimeZone(zone), {
        message: 'is not an IANA time zone: use a name like "Europe/Berlin", "America/New_York" or "UTC" (null uses the server\'s time zone)',
      })
      .describe("IANA time zone of daily_reset_hour; null uses the server's (TZ)."),
    idle_minutes: z.number().int().min(1).nullable().default(null).describe('Rotate a session after this many idle minutes; null turns it off.'),
    retention_days: z.number().int().min(1).default(30).describe('Archived sessions untouched for this many days are pruned.'),
    history_turns: z.number().int().min(1).default(20).describe('Most recent messages included in the prompt.'),
  })
  .strict()
  .prefault({});

const memory = z
  .object({
    max_results: z.number().int().min(0).default(6).describe('Memories recalled before each turn.'),
    min_score: z.number().min(0).max(1).default(0.2).describe('Lowest score of a recalled memory.'),
    chunk_tokens: z.number().int().min(50).default(400).describe('Chunk size of workspace files.'),
    chunk_overlap: z.number().int().min(0).default(80).describe('Overlap between chunks.'),
    vector_store: z.enum(['sqlite-vec', 'lancedb']).default('sqlite-vec').describe('Vector index backend.'),
    keyword_weight: z.number().min(0).max(1).default(0.4).describe('Weight of keyword score in hybrid search.'),
    vector_weight: z.number().min(0).max(1).default(0.6).describe('Weight of vector score in hybrid search.'),
  })
  .strict()
  .prefault({});

const documents = z
  .object({
    max_bytes: z.number().int().min(1024).default(26_214_400).describe('Largest document accepted (bytes; chat attachments, uploads, addDocument).'),
    max_pages: z.number().int().min(1).default(500).describe('Most pages of a PDF that is read; longer ones fail.'),
    max_text_chars: z.number().int().min(1000).default(3_000_000).describe('Most characters of text extracted from one document; more fails.'),
    ingest_concurrency: z.number().int().min(1).default(1).describe('Documents ingested at once per worker process (each on its own thread).'),
  })
  .strict()
  .prefault({});

const tools = z
  .object({
    timeout_ms: z.number().int().min(100).default(30000).describe('Timeout of one tool call.'),
    max_output_chars: z.number().int().min(100).default(16000).describe('Tool output longer than this is cut.'),
    max_parallel: z.number().int().min(1).default(2).describe('Tools run at once within one turn.'),
    approval_timeout_minutes: z.number().int().min(1).default(30).describe('An undecided approval is denied after this long.'),
    http_request: z
      .object({
        allow_domains: z.array(z.string()).default([]).describe('Domains the http_request tool may reach; empty allows any public host.'),
        max_bytes: z.number().int().min(1024).default(1_000_000).describe('Largest response body read.'),
        timeout_ms: z.number().int().min(100).default(15000).describe('Request timeout.'),
      })
      .strict()
      .prefault({}),
    web_search: z
      .object({ searxng_url: z.string().nullable().default(null).describe('SearXNG-compatible endpoint; null disables web_search.') })
      .strict()
      .prefault({}),
    shell: z
      .object({
        enabled: z.boolean().default(false).describe('Enable the shell tool (OWNER only, approval required).'),
        allow: z.array(z.string()).default([]).describe('Programs (argv[0]) the shell tool may run.'),
        timeout_ms: z.number().int().min(100).default(20000).describe('Timeout of one command.'),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});

const beats = z
  .object({
    default_file: z.string().default('heartbeats.default.json').describe('Managed beats, synced into the beats table at every start (relative to the working directory).'),
    max_failures: z.number().int().min(1).default(3).describe('Failed runs in a row after which a beat is disabled and its owner told.'),
    min_interval_minutes: z.number().int().min(1).default(5).describe('Shortest schedule a user below ADMIN may set.'),
    timezone: z.string().default('UTC').describe('IANA time zone of beats that name none.'),
    concurrency: z.number().int().min(1).default(2).describe('Beat runs at once per worker process.'),
  })
  .strict()
  .prefault({});

const skills = z
  .object({
    dir: z.string().default('./plugins/skills').describe('Folder of the skills: one <name>/SKILL.md per skill (relative paths from the working directory).'),
    mode: z.enum(['auto', 'manual']).default('auto').describe('auto: the skills the sender may use are in every prompt; manual: they are only listed, /skill <name> loads one for the next turn.'),
    max_chars: z.number().int().min(0).default(6000).describe('Character budget of the skills part of the prompt; skills that do not fit are left out.'),
    watch_debounce_ms: z.number().int().min(10).default(300).describe('Quiet time after a change in the skills folder before it is synced again.'),
  })
  .strict()
  .prefault({});

const webhooks = z
  .object({
    max_body_kb: z.number().int().min(1).default(64).describe('Largest accepted webhook body in KiB; larger requests get 413.'),
    rate_per_minute: z.number().int().min(1).default(30).describe('Calls per minute accepted per webhook; more get 429 with Retry-After.'),
  })
  .strict()
  .prefault({});

const exportsSection = z
  .object({
    expire_minutes: z.number().int().min(1).max(10_080).default(60).describe('How long the download link of a user data export (exportUserData) works; it works once.'),
  })
  .strict()
  .prefault({});

const backup = z
  .object({
    enabled: z.boolean().default(false).describe('Take scheduled backups (the managed beat __backup__), as "muninn backup" does.'),
    cron: z.string().default('0 3 * * *').describe('When scheduled backups run (cron, in beats.timezone).'),
    dir: z.string().nullable().default(null).describe('Folder of scheduled backups; null: <data_dir>/backups (left out of backups).'),
    keep: z.number().int().min(1).max(1000).default(7).describe('Scheduled backups kept; older ones are removed after each new one.'),
  })
  .strict()
  .prefault({});

const price = z
  .object({
    input_per_mtok: z.number().min(0).describe('USD per million input (prompt) tokens.'),
    output_per_mtok: z.number().min(0).describe('USD per million output (completion) tokens.'),
    cached_input_per_mtok: z.number().min(0).nullable().default(null).describe('USD per million cached input tokens; null charges them as input.'),
  })
  .strict();

const periodBudget = z
  .object({
    daily_usd: z.number().min(0).nullable().default(null).describe('Most a user may spend per day (USD); null: unlimited.'),
    monthly_usd: z.number().min(0).nullable().default(null).describe('Most a user may spend per month (USD); null: unlimited.'),
  })
  .strict();

const budgets = z
  .object({
    defaults: z
      .partialRecord(trustLevel, periodBudget)
      .default({})
      .describe('Budget per trust level, e.g. { "MEMBER": { "daily_usd": 1, "monthly_usd": 10 } }; a level not listed is unlimited (OWNER always, unless set per user).'),
    on_exceed: z.enum(['block', 'downgrade']).default('block').describe('block: refuse model calls once the budget is spent (error BUDGET_EXCEEDED); downgrade: send them to budgets.downgrade_to.'),
    downgrade_to: z
      .union([z.enum(['main', 'summarizer', 'heartbeat', 'embeddings']), route])
      .nullable()
      .default(null)
      .describe('With on_exceed downgrade: the route calls go to once the budget is spent, a role name ("summarizer") or { provider, model }.'),
    warn_at: z.number().min(0.01).max(1).default(0.8).describe('Share of a daily or monthly budget at which the user is warned once per period.'),
    max_output_tokens: z.number().int().min(16).default(4096).describe('Output tokens reserved for each call of a user with a budget, and the most such a call may write.'),
    timezone: z
      .string()
      .nullable()
      .default(null)
      .refine((zone) => zone === null || isTimeZone(zone), { message: 'is not an IANA time zone: use a name like "Europe/Berlin" or "UTC" (null uses the server\'s time zone)' })
      .describe("IANA time zone in which budget days and months begin; null uses the server's (TZ)."),
  })
  .strict()
  .prefault({});

const voice = z
  .object({
    reply: z.enum(['never', 'when_voice', 'always']).default('when_voice').describe('Spoken replies (needs ai.roles.speech): never, when_voice (to voice notes) or always; each user can override it with /voice on|off|auto.'),
    max_seconds: z.number().int().min(1).max(7200).default(300).describe('Longest voice note accepted, in seconds; longer ones are refused with a message.'),
    max_bytes: z.number().int().min(1024).default(20 * 1024 * 1024).describe('Largest audio file accepted, in bytes (Telegram bots can fetch up to 20 MiB).'),
    guests: z.boolean().default(false).describe('Accept voice notes from GUEST users (and send them spoken replies).'),
    keep_audio: z.boolean().default(false).describe('Keep received audio in <data_dir>/voice after transcription; false deletes it.'),
    language: z.string().nullable().default(null).describe('ISO-639-1 language hint for the transcriber (e.g. "de"); null lets it detect.'),
    timeout_ms: z.number().int().min(500).default(120000).describe('Timeout of one transcription or speech request.'),
    attempts: z.number().int().min(1).max(10).default(3).describe('Tries of a transcription (with back-off) before the sender is told it failed.'),
    concurrency: z.number().int().min(1).default(2).describe('Transcriptions and speech syntheses at once per worker process.'),
    speech_voice: z.string().default('alloy').describe('Voice name sent to the speech endpoint.'),
    speech_format: z.enum(['opus', 'mp3', 'wav', 'aac', 'flac', 'pcm']).default('opus').describe('response_format asked of the speech endpoint; anything but opus (OGG/Opus) is converted with ffmpeg.'),
    speech_max_chars: z.number().int().min(1).max(100000).default(4000).describe('Longer replies are sent as text only.'),
    text_over_chars: z.number().int().min(0).default(400).describe('Spoken replies longer than this are also sent as text.'),
    ffmpeg: z.string().default('ffmpeg').describe('ffmpeg binary, used only to convert speech that is not OGG/Opus already.'),
  })
  .strict()
  .prefault({});

const channelCommon = {
  enabled: z.boolean().default(false).describe('Start this channel.'),
  dm_policy: dmPolicy.default('pairing').describe('Unknown DM senders: pairing | open | allowlist | disabled.'),
  allow_from: z.array(z.string()).default([]).describe('Identities (platform ids) always allowed in DMs.'),
  group_policy: groupPolicy.default('allowlist').describe('Groups: allowlist | open | disabled.'),
  groups: z.array(z.string()).default([]).describe('Allowed group chat ids when group_policy is allowlist.'),
  require_mention: z.boolean().default(true).describe('In groups, answer only when mentioned or replied to.'),
  guest_messages_per_minute: z.number().int().min(1).default(5).describe('Rate limit of GUEST senders.'),
};

const channels = z
  .object({
    telegram: z
      .object({
        ...channelCommon,
        bot_token: z.string().nullable().default(null).describe('Bot token from @BotFather (env TELEGRAM_BOT_TOKEN).'),
        api_root: z.string().default('https://api.telegram.org').describe('Bot API server (env TELEGRAM_API_ROOT).'),
        webhook_url: z.string().nullable().default(null).describe('Public URL for webhook mode; null uses long polling.'),
        stream: z
          .enum(['off', 'edit'])
          .default('off')
          .describe('edit: replies stream live while the model writes (a draft in private chats, else a message edited as it grows).'),
        stream_interval_ms: z.number().int().min(250).default(1000).describe('Least time between two live updates in a private chat (groups: 3×); the first comes this long after the reply starts, so a reply finished sooner is sent as one message.'),
      })
      .strict()
      .prefault({}),
    whatsapp: z
      .object({
        ...channelCommon,
        per_chat_per_second: z.number().min(0.1).default(1).describe('Outbound messages per second per chat.'),
        per_minute: z.number().int().min(1).default(20).describe('Outbound messages per minute overall.'),
      })
      .strict()
      .prefault({}),
    web: z.object({ enabled: z.boolean().default(true).describe('Web chat through GraphQL sendMessage.') }).strict().prefault({}),
    run_on: z
      .enum(['any', 'api', 'worker'])
      .default('any')
      .describe('Which processes may hold the platform channels (Telegram poller, WhatsApp socket): any, api or worker role (role all always may). One process holds each channel at a time.'),
    lease_ms: z.number().int().min(1000).default(15000).describe('Lease of the process holding a channel, renewed while it runs; a holder that dies is replaced after its heartbeat stops (a few seconds), at the latest after this.'),
    tui: z.object({ enabled: z.boolean().default(true).describe('Terminal client (muninn chat).') }).strict().prefault({}),
    api: z
      .object({
        enabled: z.boolean().default(true).describe('OpenAI-compatible API at /v1 (GET /v1/models, POST /v1/chat/completions) for API tokens.'),
        rate_per_minute: z.number().int().min(1).default(60).describe('Requests per minute accepted per API token at /v1; more get 429 with Retry-After.'),
        max_body_kb: z.number().int().min(1).default(8192).describe('Largest accepted /v1 request body in KiB (images included); larger requests get 413.'),
        max_messages: z.number().int().min(1).default(200).describe('Most messages in one chat completion request.'),
        max_message_chars: z.number().int().min(1).default(32000).describe('Longest text of one message in a chat completion request.'),
        max_images: z.number().int().min(0).default(4).describe('Most images in one chat completion request.'),
        max_image_kb: z.number().int().min(1).default(5120).describe('Largest image (data URL or fetched http(s) URL) in KiB.'),
        models: z
          .record(
            z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'model aliases are letters, digits and . _ : - (at most 64)'),
            z
              .object({
                description: z.string().default('').describe('Shown to clients in /v1/models.'),
                instructions: z.string().default('').describe('Added to the system prompt of requests for this alias (after Muninn\'s own rules).'),
              })
              .strict(),
          )
          .default({})
          .describe('Agent aliases offered at /v1/models besides `muninn`: the default agent with extra instructions.'),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});

export const appConfigSchema = z
  .object({
    data_dir: z.string().default('./data').describe('Folder for the database, managed Redis, tokens and workspaces (env MUNINN_DATA_DIR).'),
    shutdown_timeout_ms: z
      .number()
      .int()
      .min(0)
      .default(10_000)
      .describe('On SIGTERM/SIGINT, how long running turns may take to finish before they are handed back to the queue (answered after the restart).'),
    server,
    graphql,
    database,
    redis,
    queues,
    log,
    metrics,
    ai,
    session,
    memory,
    documents,
    tools,
    beats,
    skills,
    webhooks,
    exports: exportsSection,
    backup,
    channels,
    voice,
    mcp: mcpConfigSchema,
    pricing: z
      .record(z.string(), price)
      .default({})
      .describe('Prices per model, keyed "<model>" or "<provider>/<model>" (the latter wins), e.g. { "gpt-4o": { "input_per_mtok": 2.5, "output_per_mtok": 10 } }.'),
    budgets,
    default_trust: trustLevel.default('MEMBER').describe('Trust of users created without an explicit level.'),
  })
  .strict();

/** The validated configuration, every key filled. */
export type AppConfig = z.infer<typeof appConfigSchema>;
/** One model provider entry. */
export type ProviderConfig = z.infer<typeof provider>;
/** Voice notes in and out (`voice.*`). */
export type VoiceConfig = z.infer<typeof voice>;
/** One model's price (USD per million tokens). */
export type PriceConfig = z.infer<typeof price>;
/** Spending limits and what happens when they are reached. */
export type BudgetsConfig = z.infer<typeof budgets>;
/** One role route. */
export type RouteConfig = z.infer<typeof route>;
