/**
 * Chat `finish_reason` -> canonical `stop_reason`.
 *
 * - stop -> end_turn; but tool_use when tool calls are present (some vendors say "stop" after tool
 *   calls and agent loops depend on tool_use), and refusal when the answer was a refusal.
 * - length -> max_tokens; tool_calls and legacy function_call -> tool_use; content_filter -> refusal.
 * - missing or vendor-specific values (eos, error, ...) -> end_turn (tool_use with tool calls).
 * The chat wire never says which stop sequence matched, so `stop_sequence` stays null and a matched
 * stop sequence is reported as end_turn.
 */
import type { StopReason } from '../../canonical/types.js';
import { assertNever } from './assert-never.js';
import type { ChatFinishReason } from './wire-types.js';

export interface AnswerFacts {
  hasToolCalls: boolean;
  refused: boolean;
}

const KNOWN_FINISH_REASONS: readonly string[] = [
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'function_call',
] satisfies readonly ChatFinishReason[];

export function stopReasonOf(finishReason: unknown, facts: AnswerFacts): StopReason {
  if (!isKnownFinishReason(finishReason)) return facts.hasToolCalls ? 'tool_use' : 'end_turn';
  switch (finishReason) {
    case 'stop':
      if (facts.hasToolCalls) return 'tool_use';
      return facts.refused ? 'refusal' : 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return assertNever(finishReason, 'finish_reason');
  }
}

function isKnownFinishReason(value: unknown): value is ChatFinishReason {
  return typeof value === 'string' && KNOWN_FINISH_REASONS.includes(value);
}

/**
 * Canonical `stop_reason` -> chat `finish_reason` (the outbound direction, /v1/chat/completions):
 * end_turn, stop_sequence and pause_turn -> stop; max_tokens and model_context_window_exceeded ->
 * length; tool_use -> tool_calls; refusal -> content_filter; none yet -> stop.
 */
export function finishReasonOf(stopReason: StopReason | null): ChatFinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
