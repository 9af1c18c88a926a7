/** Per-profile knobs of the chat-completions primitive. A profile row names its values. */
export interface ChatOptions {
  /**
   * Which body field carries the canonical `max_tokens`. OpenAI reasoning models reject the
   * deprecated `max_tokens` with a 400 and want `max_completion_tokens`; many compatible vendors
   * still only know `max_tokens`.
   */
  tokenField: 'max_tokens' | 'max_completion_tokens';
}
