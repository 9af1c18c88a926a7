/**
 * The Provider Profile catalogue: one row per profile of SPEC.md 4.2, as data. Routing reads it,
 * docs/profiles.md is generated from it, and a test walks every row against every field.
 *
 * `unsupported` is the matrix column as DESIGN.md resolves it (portable mode). `nativeRejects` are
 * the fields a profile rule rejects "on both paths" / "on the native path too". `rules` name the
 * value-dependent checks implemented in catalogue/rules.ts.
 */
import type { PrimitiveName } from '../primitives/shared/types.js';

/** Canonical request fields a profile may be unable to carry (typed: a typo fails to compile). */
export const CANONICAL_FIELDS = [
  'max_tokens',
  'metadata',
  'service_tier',
  'thinking',
  'top_k',
  'top_p',
  'temperature',
  'stop_sequences',
  'tools',
  'tool_choice',
  'output_config.effort',
  'output_config.format',
] as const;
export type CanonicalField = (typeof CANONICAL_FIELDS)[number];

export type NativeRejectable = 'top_k' | 'top_p' | 'temperature' | 'stop_sequences' | 'cache_control';

export type RuleName =
  /** vendorh.chat.v1: stop_sequences carried only as at most five sequences of at most 32 bytes. */
  | 'stop_sequences_five_of_32_bytes'
  /** mantle responses profiles: a streaming request that carries tools is routed away. */
  | 'no_stream_with_tools'
  /** vendorg.vendora.messages.v1: blocks of type video and mid-conversation system turns refused. */
  | 'refuse_video_and_mid_conversation_system';

export type NativeMode =
  /** Body, tools and content blocks forwarded verbatim (direct, cloudf mantle vendora). */
  | 'verbatim'
  /** Forwarded, but the profile's rules still reject what they name (vendorg, vendorh vendora-wire). */
  | 'guarded'
  /** Not a vendora-wire profile: cannot be pinned natively. */
  | 'none';

export interface ProfileRow {
  id: string;
  primitive: PrimitiveName;
  availability: 'creatable' | 'withheld';
  maturity: 'compatible';
  unsupported: readonly CanonicalField[];
  /** Whether the profile has a stream primitive. */
  stream: boolean;
  native: NativeMode;
  nativeRejects: readonly NativeRejectable[];
  /** Whether vendora-beta tokens the connection accepts may be forwarded (native mode only). */
  forwardsBeta: boolean;
  /** Whether POST /v1/messages/count_tokens can be served by this profile. */
  countTokens: boolean;
  rules: readonly RuleName[];
  /** chat-completions only: which field carries max_tokens. */
  tokenField?: 'max_tokens' | 'max_completion_tokens';
  /** Short explanation for docs/profiles.md. */
  notes: string;
}

const CHAT_UNSUPPORTED = [
  'metadata',
  'service_tier',
  'thinking',
  'top_k',
] as const satisfies readonly CanonicalField[];

export const PROFILES = [
  {
    id: 'vendorb.chat-embeddings.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: CHAT_UNSUPPORTED,
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_completion_tokens',
    notes: 'Chat completions; effort carried as reasoning_effort, format as a JSON-schema response_format.',
  },
  {
    id: 'vendorb.responses.v1',
    primitive: 'responses',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: ['metadata', 'output_config.effort', 'service_tier', 'stop_sequences', 'thinking', 'top_k'],
    stream: false,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    notes: 'Stateless responses; no stream primitive (rule 2): streaming requests are routed away.',
  },
  {
    id: 'vendora.messages.2023-06-01',
    primitive: 'messages',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [],
    stream: true,
    native: 'verbatim',
    nativeRejects: [],
    forwardsBeta: true,
    countTokens: true,
    rules: [],
    notes:
      'The direct vendora Messages API. Native mode forwards validated blocks and events verbatim; serves count_tokens.',
  },
  {
    id: 'vendorc.chat-embeddings.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: CHAT_UNSUPPORTED,
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_tokens',
    notes: 'Chat completions.',
  },
  {
    id: 'vendord.chat.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'output_config.format',
      'service_tier',
      'thinking',
      'top_k',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_tokens',
    notes:
      'Chat completions; effort and format routed away at field level (support is value-dependent upstream, rule 4).',
  },
  {
    id: 'compat.chat-embeddings.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: CHAT_UNSUPPORTED,
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_tokens',
    notes: 'Any chat-completions-compatible server.',
  },
  {
    id: 'vendore.generate-content.text.v1beta',
    primitive: 'generate-content',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'output_config.format',
      'service_tier',
      'thinking',
      'tool_choice',
      'tools',
      'top_k',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    notes:
      'generateContent, text and inline images; tools, tool history, effort and format routed away (rule 5).',
  },
  {
    id: 'cloudf.runtime.converse.text.v1',
    primitive: 'converse',
    availability: 'withheld',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'output_config.format',
      'service_tier',
      'thinking',
      'tool_choice',
      'tools',
      'top_k',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    notes: 'Withheld: cannot be configured.',
  },
  {
    id: 'cloudf.mantle.chat.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: CHAT_UNSUPPORTED,
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_tokens',
    notes: 'cloudf mantle chat completions (SigV4 or bearer key).',
  },
  {
    id: 'cloudf.mantle.vendorb.chat.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: CHAT_UNSUPPORTED,
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_completion_tokens',
    notes: 'vendorb models on cloudf mantle, chat completions.',
  },
  {
    id: 'cloudf.mantle.responses.v1',
    primitive: 'responses',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'service_tier',
      'stop_sequences',
      'thinking',
      'tools',
      'top_k',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: ['no_stream_with_tools'],
    notes: 'cloudf mantle stateless responses; streams, but not with tools; effort never carried (rule 3).',
  },
  {
    id: 'cloudf.mantle.vendorb.responses.v1',
    primitive: 'responses',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'service_tier',
      'stop_sequences',
      'thinking',
      'tools',
      'top_k',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: ['no_stream_with_tools'],
    notes: 'vendorb models on cloudf mantle, stateless responses; as cloudf.mantle.responses.v1 (rule 3).',
  },
  {
    id: 'cloudf.mantle.vendora.messages.v1',
    primitive: 'messages',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: ['output_config.effort', 'output_config.format'],
    stream: true,
    native: 'verbatim',
    nativeRejects: [],
    forwardsBeta: true,
    countTokens: false,
    rules: [],
    notes: 'vendora Messages on cloudf mantle; native mode forwards output_config and blocks verbatim.',
  },
  {
    id: 'vendorg.vendora.messages.v1',
    primitive: 'messages',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: ['top_k', 'stop_sequences', 'output_config.effort', 'output_config.format'],
    stream: true,
    native: 'guarded',
    nativeRejects: ['top_k', 'stop_sequences', 'cache_control'],
    forwardsBeta: false,
    countTokens: false,
    rules: ['refuse_video_and_mid_conversation_system'],
    notes:
      'vendorg vendora-compatible endpoint: top_k, stop_sequences, cache_control rejected on both paths; no beta (rule 6).',
  },
  {
    id: 'vendorg.chat.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'output_config.format',
      'service_tier',
      'stop_sequences',
      'thinking',
      'top_k',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    tokenField: 'max_tokens',
    notes:
      'vendorg chat completions; max_tokens carried, so effort-bearing requests are routed away (rule 7).',
  },
  {
    id: 'vendorg.responses.v1',
    primitive: 'responses',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'output_config.format',
      'service_tier',
      'stop_sequences',
      'thinking',
      'top_k',
    ],
    stream: false,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    notes: 'vendorg stateless responses; no stream primitive (rule 2), no effort (rule 8).',
  },
  {
    id: 'vendorh.chat.v1',
    primitive: 'chat-completions',
    availability: 'creatable',
    maturity: 'compatible',
    // output_config.effort: low/high would need a request without max_tokens, which /v1/messages
    // requires; the other values have no rung. So every effort-bearing request is routed away (DESIGN).
    unsupported: [
      'metadata',
      'output_config.effort',
      'service_tier',
      'temperature',
      'thinking',
      'tool_choice',
      'top_k',
      'top_p',
    ],
    stream: true,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: ['stop_sequences_five_of_32_bytes'],
    tokenField: 'max_completion_tokens',
    notes:
      'vendorh chat completions; max_tokens as max_completion_tokens; stop within 5 x 32 bytes; effort routed away (max_tokens is always present; low/high need a request without it, other values have no rung; rule 10).',
  },
  {
    id: 'vendorh.vendora.messages.v1',
    primitive: 'messages',
    availability: 'creatable',
    maturity: 'compatible',
    unsupported: [
      'metadata',
      'output_config.effort',
      'service_tier',
      'temperature',
      'thinking',
      'top_k',
      'top_p',
    ],
    stream: true,
    native: 'guarded',
    nativeRejects: ['temperature', 'top_p', 'top_k', 'cache_control'],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    notes:
      'vendorh vendora-compatible endpoint: temperature, top_p, top_k, cache_control rejected on both paths; effort native only (rule 9).',
  },
  {
    id: 'vendorh.responses.v1',
    primitive: 'responses',
    availability: 'withheld',
    maturity: 'compatible',
    unsupported: [
      'max_tokens',
      'metadata',
      'output_config.effort',
      'service_tier',
      'stop_sequences',
      'temperature',
      'thinking',
      'top_k',
      'top_p',
    ],
    stream: false,
    native: 'none',
    nativeRejects: [],
    forwardsBeta: false,
    countTokens: false,
    rules: [],
    notes: 'Withheld: cannot be configured.',
  },
] as const satisfies readonly ProfileRow[];

export type ProfileId = (typeof PROFILES)[number]['id'];

const BY_ID: ReadonlyMap<string, ProfileRow> = new Map(PROFILES.map((row) => [row.id, row]));

export function findProfile(id: string): ProfileRow | undefined {
  return BY_ID.get(id);
}
