/**
 * Per-profile knobs of the messages primitive. A profile row names its values.
 */
export interface MessagesOptions {
  /** Sent upstream as the `vendora-version` header. */
  version: string;
}

/** The one vendora-version the gateway speaks, inbound and upstream. */
export const VENDORA_VERSION = '2023-06-01';

export const DEFAULT_MESSAGES_OPTIONS: MessagesOptions = Object.freeze({ version: VENDORA_VERSION });
