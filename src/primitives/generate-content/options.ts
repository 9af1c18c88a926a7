/**
 * Per-profile knobs of the generate-content primitive. A profile row (or alias target) names its
 * values.
 *
 * Why `thinkingBudget` exists: thinking models think by default even when the request says nothing
 * and bill the thought tokens as output (`thoughtsTokenCount`), whether or not thoughts are shown.
 * The portable profile cannot carry canonical `thinking`, so the primitive always sends
 * `generationConfig.thinkingConfig.thinkingBudget` explicitly. 0 turns thinking off on the models
 * that allow it (2.5 Flash and Flash-Lite); models that cannot stop thinking reject 0 (2.5 Pro
 * accepts 128..32768), so their targets set their minimum. Thought and answer tokens share the
 * `maxOutputTokens` allowance, which is always sent, so the worst-case reservation (max_tokens x
 * output price) still bounds the cost; -1 (dynamic) is refused because it leaves that sharing as
 * the only bound. Models driven by `thinkingLevel` (Gemini 3) still accept `thinkingBudget`; the
 * two must never be sent together, and this primitive never sends `thinkingLevel`.
 */
export interface GenerateContentOptions {
  /** `generationConfig.thinkingConfig.thinkingBudget`, a non-negative integer (0 = thinking off). */
  thinkingBudget: number;
}

export const DEFAULT_GENERATE_CONTENT_OPTIONS: GenerateContentOptions = Object.freeze({ thinkingBudget: 0 });

/** Why the options are invalid, or undefined. Configuration calls it at start-up. */
export function generateContentOptionsProblem(options: GenerateContentOptions): string | undefined {
  if (!Number.isSafeInteger(options.thinkingBudget) || options.thinkingBudget < 0) {
    return 'thinkingBudget must be a non-negative integer (0 turns thinking off; dynamic -1 is not allowed)';
  }
  return undefined;
}
