/** The platform channels an OWNER can set up from the console. */
export const SETUP_CHANNELS = ['telegram', 'whatsapp'] as const satisfies readonly string[];
export type SetupChannel = (typeof SETUP_CHANNELS)[number];

/** What is stored (sealed) for each channel. */
export interface ChannelSettings {
  telegram: { botToken: string };
  /** Nothing to enter: linking happens by scanning the QR; the link itself lives in the data folder. */
  whatsapp: Record<string, never>;
}

/** Where a channel's settings come from. */
export type ChannelSetupSource = 'CONSOLE' | 'CONFIG' | 'NONE';

/** A channel's set-up as the console shows it: never the secret itself. */
export interface ChannelSetupSummary {
  channel: SetupChannel;
  source: ChannelSetupSource;
  /** Whether a secret (the bot token) is stored or configured. */
  secretSet: boolean;
  /** What may be shown about it: the bot's @username. */
  label: string | null;
  updatedAt: Date | null;
  updatedById: string | null;
}

/** The settings a process applies for one channel; `signature` changes with every stored change. */
export interface AppliedSetup<C extends SetupChannel = SetupChannel> {
  channel: C;
  signature: string;
  settings: ChannelSettings[C];
}

/** Port: asks the Bot API whom a token belongs to (getMe). Reasons never contain the token. */
export interface TelegramTokenCheck {
  check(token: string, signal?: AbortSignal): Promise<{ ok: true; username: string } | { ok: false; reason: string }>;
}

/** Seals and opens secrets (the app's SecretBox). */
export interface SetupSealer {
  sealJson(value: unknown): string;
  openJson<T>(sealed: string): T;
}

/** The config file's own settings of a channel (`channels.<name>`), as far as the console shows them. */
export interface ConfiguredChannel {
  enabled: boolean;
  secretSet: boolean;
}
