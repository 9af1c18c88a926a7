/**
 * Pieces shared by the inbound faces that turn a vendorb-family request into the canonical one
 * (primitives/responses/inbound-request.ts, primitives/chat-completions/inbound-request.ts): the
 * alternating turns, tool_choice, the effort words and tool-call arguments. Each face passes its
 * own error (naming the field) so refusals stay in its words. Pure.
 */
import type { ContentBlockParam, Effort, MessageParam, ToolChoice } from './types.js';

/** A field of an inbound request a face cannot accept; `param` names it. */
export class InboundFieldError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(`${param}: ${message}`);
  }
}

/** The face's error for a field it cannot accept (`param` names the field). */
export type InvalidField = (param: string, message: string) => Error;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Builds alternating turns; a tool_result always goes before the other blocks of its user turn. */
export class Turns {
  private readonly list: Array<{ role: 'user' | 'assistant'; content: ContentBlockParam[] }> = [];

  constructor(
    private readonly invalid: InvalidField,
    /** The field named when no turn is left (`input`, `messages`). */
    private readonly field: string,
  ) {}

  add(role: 'user' | 'assistant', blocks: ContentBlockParam[]): void {
    const kept = blocks.filter((block) => block.type !== 'text' || block.text.trim().length > 0);
    if (kept.length === 0) return;
    const last = this.list.at(-1);
    if (last?.role !== role) {
      this.list.push({ role, content: [...kept] });
      return;
    }
    for (const block of kept) {
      if (block.type === 'tool_result') {
        const firstOther = last.content.findIndex((existing) => existing.type !== 'tool_result');
        last.content.splice(firstOther < 0 ? last.content.length : firstOther, 0, block);
      } else last.content.push(block);
    }
  }

  messages(): MessageParam[] {
    if (this.list.length === 0) throw this.invalid(this.field, 'holds no message to answer');
    return this.list;
  }
}

/**
 * The vendorb tool_choice words (auto, required, none, or a named function whose name `nameOf`
 * reads) -> canonical; parallel_tool_calls false (`serial`) -> disable_parallel_tool_use.
 */
export function canonicalToolChoice(
  choice: unknown,
  serial: boolean,
  nameOf: (named: Record<string, unknown>) => string,
  invalid: () => Error,
): ToolChoice | undefined {
  const parallel = serial ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined || choice === null) return serial ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (choice === 'none') return { type: 'none' };
  if (isRecord(choice) && choice.type === 'function')
    return { type: 'tool', name: nameOf(choice), ...parallel };
  throw invalid();
}

/** vendorb reasoning effort words -> canonical effort (minimal -> low; none -> no effort). */
export const EFFORT_WORDS: Readonly<Record<string, Effort | undefined>> = {
  none: undefined,
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
  max: 'max',
};

/** An effort word checked against EFFORT_WORDS (`param` names the field). */
export function effortOf(word: unknown, param: string, invalid: InvalidField): Effort | undefined {
  if (word === undefined || word === null) return undefined;
  if (typeof word !== 'string' || !Object.hasOwn(EFFORT_WORDS, word)) {
    throw invalid(param, `must be one of ${Object.keys(EFFORT_WORDS).join(', ')}`);
  }
  return EFFORT_WORDS[word];
}

/** A tool call's arguments (JSON text of an object; empty: none) as the canonical tool_use input. */
export function argumentsObject(value: unknown, at: string, invalid: InvalidField): Record<string, unknown> {
  if (value === undefined || value === '') return {};
  if (typeof value !== 'string') throw invalid(at, 'must be a JSON text');
  try {
    const parsed: unknown = JSON.parse(value);
    if (isRecord(parsed)) return parsed;
  } catch {
    // fall through
  }
  throw invalid(at, 'must be the JSON text of an object');
}
