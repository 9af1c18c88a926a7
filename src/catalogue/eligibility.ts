/**
 * Pure eligibility with reasons. Portable mode: every reason a profile cannot carry a request
 * (an unsupported field, a missing stream primitive, a named value rule, a primitive limit);
 * an empty list means eligible. Native mode: what a pinned vendora-wire profile rejects.
 */
import type { MessagesRequest } from '../canonical/types.js';
import {
  CANONICAL_FIELDS,
  type CanonicalField,
  type NativeRejectable,
  type ProfileRow,
  type RuleName,
} from './profiles.js';

function present(request: MessagesRequest, field: CanonicalField): boolean {
  switch (field) {
    case 'max_tokens':
      return request.max_tokens !== undefined;
    case 'metadata':
    case 'service_tier':
    case 'thinking':
    case 'top_k':
    case 'top_p':
    case 'temperature':
    case 'tool_choice':
      return request[field] !== undefined;
    case 'stop_sequences':
      return (request.stop_sequences?.length ?? 0) > 0;
    case 'tools':
      return (request.tools?.length ?? 0) > 0;
    case 'output_config.effort':
      return request.output_config?.effort !== undefined && request.output_config.effort !== null;
    case 'output_config.format':
      return request.output_config?.format !== undefined && request.output_config.format !== null;
    default: {
      const never: never = field;
      return never;
    }
  }
}

export function presentFields(request: MessagesRequest): CanonicalField[] {
  return CANONICAL_FIELDS.filter((field) => present(request, field));
}

/** A named value rule's reason, or undefined when the rule does not object. */
function ruleReason(rule: RuleName, request: MessagesRequest): string | undefined {
  switch (rule) {
    case 'stop_sequences_five_of_32_bytes': {
      const sequences = request.stop_sequences ?? [];
      if (sequences.length > 5) return 'stop_sequences: more than five sequences';
      if (sequences.some((sequence) => Buffer.byteLength(sequence, 'utf8') > 32))
        return 'stop_sequences: a sequence exceeds 32 bytes';
      return undefined;
    }
    case 'no_stream_with_tools':
      return request.stream === true && (request.tools?.length ?? 0) > 0 ? 'streaming with tools' : undefined;
    case 'refuse_video_and_mid_conversation_system':
      return undefined; // portable requests carry neither; see nativeRejections
    default: {
      const never: never = rule;
      return never;
    }
  }
}

/**
 * Why portable routing skips a target, as a fixed code (metrics label it; never the free text):
 *   unsupported_field    the request uses a field the profile does not carry
 *   no_stream_primitive  a streamed request, a profile without a stream primitive
 *   value_rule           a named value rule of the profile objects (stop sequences, stream with tools)
 *   cannot_carry         the primitive's own limit (its binding cannot express the request)
 *   provider_tools       provider-executed tools the connection does not declare
 */
export const SKIP_CODES = [
  'unsupported_field',
  'no_stream_primitive',
  'value_rule',
  'cannot_carry',
  'provider_tools',
] as const;

export type SkipCode = (typeof SKIP_CODES)[number];

/** One reason a target is skipped: its code and the words for the client. */
export interface SkipReason {
  code: SkipCode;
  detail: string;
}

export function portableSkipReasons(
  request: MessagesRequest,
  fields: readonly CanonicalField[],
  row: ProfileRow,
  cannotCarry: (request: MessagesRequest) => string | undefined,
): SkipReason[] {
  const reasons: SkipReason[] = [];
  for (const field of fields)
    if (row.unsupported.includes(field))
      reasons.push({ code: 'unsupported_field', detail: `${field} unsupported` });
  if (request.stream === true && !row.stream)
    reasons.push({ code: 'no_stream_primitive', detail: 'no stream primitive' });
  for (const rule of row.rules) {
    const reason = ruleReason(rule, request);
    if (reason) reasons.push({ code: 'value_rule', detail: reason });
  }
  if (reasons.length === 0) {
    const reason = cannotCarry(request);
    if (reason) reasons.push({ code: 'cannot_carry', detail: reason });
  }
  return reasons;
}

export interface NativeFacts {
  hasCacheControl: boolean;
  /** Block types and roles found in messages (native requests may carry more than the canonical set). */
  blockTypes: ReadonlySet<string>;
  hasSystemTurn: boolean;
}

const NATIVE_FIELD_OF: Record<Exclude<NativeRejectable, 'cache_control'>, CanonicalField> = {
  top_k: 'top_k',
  top_p: 'top_p',
  temperature: 'temperature',
  stop_sequences: 'stop_sequences',
};

/** What a pinned vendora-wire profile rejects on the native path (its "both paths" rules). */
export function nativeRejections(request: MessagesRequest, facts: NativeFacts, row: ProfileRow): string[] {
  const reasons: string[] = [];
  for (const rejectable of row.nativeRejects) {
    if (rejectable === 'cache_control') {
      if (facts.hasCacheControl)
        reasons.push('cache_control is rejected by this profile (prompt caching unavailable)');
    } else if (present(request, NATIVE_FIELD_OF[rejectable])) {
      reasons.push(`${rejectable} is rejected by this profile on both paths`);
    }
  }
  if (row.rules.includes('refuse_video_and_mid_conversation_system')) {
    if (facts.blockTypes.has('video')) reasons.push('blocks of type video are refused by this profile');
    if (facts.hasSystemTurn) reasons.push('mid-conversation system turns are refused by this profile');
  }
  return reasons;
}
