/**
 * Per-profile knobs of the messages primitive. A profile row names its values.
 */
export interface MessagesOptions {
  /** Sent upstream as the `vendora-version` header. */
  version: string;
}

export const DEFAULT_MESSAGES_OPTIONS: MessagesOptions = Object.freeze({ version: '2023-06-01' });
