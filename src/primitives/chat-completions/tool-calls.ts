/**
 * Chat tool calls -> canonical tool_use pieces. `arguments` (a JSON string) -> canonical `tool_use.input` (a JSON object).
 * Empty arguments mean no arguments (`{}`); anything else must parse to an object, otherwise the
 * upstream broke the wire (truncated or invalid JSON) and we say so instead of guessing.
 */
import { UpstreamProtocolError } from '../shared/types.js';

export function parseToolArguments(text: string, callName: string): Record<string, unknown> {
  if (text.trim().length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UpstreamProtocolError(`tool call "${callName}" has arguments that are not valid JSON`);
  }
  if (!isJsonObject(parsed)) {
    throw new UpstreamProtocolError(`tool call "${callName}" has arguments that are not a JSON object`);
  }
  return parsed;
}

/** True when the text is already a whole JSON object (nothing valid can follow it). */
export function isCompleteJsonObject(text: string): boolean {
  try {
    return isJsonObject(JSON.parse(text));
  } catch {
    return false;
  }
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The canonical id of a tool call the upstream sent without an id. Derived from the message id
 * and the call's position so the streaming and non-streaming translations agree without a clock
 * or randomness. Ids the upstream does send are kept verbatim (the next turn's tool_call_id must
 * match them exactly).
 */
export function fallbackToolUseId(messageId: string, callIndex: number): string {
  return `toolu_${messageId.replace(/^msg_/, '')}_${callIndex}`;
}
