/**
 * The profile matrix as SPEC.md 4.2 states it and DESIGN.md ("Routing, modes and the profile
 * matrix") resolves it, written out by hand. It is deliberately NOT derived from
 * src/catalogue/profiles.ts: the matrix tests compare the two row by row and drive every request
 * expectation from this table, so a wrong catalogue row fails a test instead of defining the truth.
 *
 * Resolutions applied (DESIGN wins over SPEC):
 * - vendorg.chat.v1 and vendorh.chat.v1 carry max_tokens (matrix lists it); what they cannot carry is
 *   max_tokens together with output_config.effort, so effort is unsupported on both.
 * - vendorh.chat.v1 carries stop_sequences within five sequences of at most 32 bytes (rule 10 and
 *   the limits table); outside that, routed away.
 * - vendord.chat.v1 routes away any output_config.effort or output_config.format (rule 4).
 * - vendorb.responses.v1, vendorg.responses.v1, vendorh.responses.v1 have no stream primitive
 *   (rule 2). The mantle responses profiles stream, but not with tools (rule 3).
 */

export type ExpectedField =
  | 'max_tokens'
  | 'metadata'
  | 'service_tier'
  | 'thinking'
  | 'top_k'
  | 'top_p'
  | 'temperature'
  | 'stop_sequences'
  | 'tools'
  | 'tool_choice'
  | 'output_config.effort'
  | 'output_config.format';

export type NativeRejectable = 'top_k' | 'top_p' | 'temperature' | 'stop_sequences' | 'cache_control';

export type ExpectedPrimitive =
  | 'messages'
  | 'chat-completions'
  | 'responses'
  | 'generate-content'
  | 'converse';

export interface ExpectedProfile {
  id: string;
  primitive: ExpectedPrimitive;
  creatable: boolean;
  /** Portable mode: request fields the profile routes away (the matrix column, as DESIGN resolves it). */
  unsupported: readonly ExpectedField[];
  /** Has a stream primitive (rule 2). */
  stream: boolean;
  /** Accepts Svc-Route-Mode: native (the four vendora-wire profiles). */
  native: boolean;
  /**
   * Native mode: what the profile still rejects ("on both paths" / "on the native path too", rules 6
   * and 9 as DESIGN lists them); everything else is forwarded verbatim.
   */
  nativeRejects?: readonly NativeRejectable[];
  /** chat-completions: the body field that carries max_tokens. */
  tokenField?: 'max_tokens' | 'max_completion_tokens';
  /** vendorh.chat.v1: stop_sequences only as at most five sequences of at most 32 UTF-8 bytes. */
  stopFiveOf32?: true;
  /** mantle responses: a streaming request that carries tools is routed away (rule 3). */
  noStreamWithTools?: true;
}

const CHAT: readonly ExpectedField[] = ['metadata', 'service_tier', 'thinking', 'top_k'];
const MANTLE_RESPONSES: readonly ExpectedField[] = [
  'metadata',
  'output_config.effort',
  'service_tier',
  'stop_sequences',
  'thinking',
  'tools',
  'top_k',
];
const GENERATE_CONTENT: readonly ExpectedField[] = [
  'metadata',
  'output_config.effort',
  'output_config.format',
  'service_tier',
  'thinking',
  'tool_choice',
  'tools',
  'top_k',
];

export const EXPECTED_PROFILES: readonly ExpectedProfile[] = [
  {
    id: 'vendorb.chat-embeddings.v1',
    primitive: 'chat-completions',
    creatable: true,
    unsupported: CHAT,
    stream: true,
    native: false,
    tokenField: 'max_completion_tokens',
  },
  {
    id: 'vendorb.responses.v1',
    primitive: 'responses',
    creatable: true,
    unsupported: ['metadata', 'output_config.effort', 'service_tier', 'stop_sequences', 'thinking', 'top_k'],
    stream: false,
    native: false,
  },
  {
    id: 'vendora.messages.2023-06-01',
    primitive: 'messages',
    creatable: true,
    unsupported: [],
    stream: true,
    native: true,
  },
  {
    id: 'vendorc.chat-embeddings.v1',
    primitive: 'chat-completions',
    creatable: true,
    unsupported: CHAT,
    stream: true,
    native: false,
    tokenField: 'max_tokens',
  },
  {
    id: 'vendord.chat.v1',
    primitive: 'chat-completions',
    creatable: true,
    unsupported: [
      'metadata',
      'output_config.effort',
      'output_config.format',
      'service_tier',
      'thinking',
      'top_k',
    ],
    stream: true,
    native: false,
    tokenField: 'max_tokens',
  },
  {
    id: 'compat.chat-embeddings.v1',
    primitive: 'chat-completions',
    creatable: true,
    unsupported: CHAT,
    stream: true,
    native: false,
    tokenField: 'max_tokens',
  },
  {
    id: 'vendore.generate-content.text.v1beta',
    primitive: 'generate-content',
    creatable: true,
    unsupported: GENERATE_CONTENT,
    stream: true,
    native: false,
  },
  {
    id: 'cloudf.runtime.converse.text.v1',
    primitive: 'converse',
    creatable: false,
    unsupported: GENERATE_CONTENT,
    stream: true,
    native: false,
  },
  {
    id: 'cloudf.mantle.chat.v1',
    primitive: 'chat-completions',
    creatable: true,
    unsupported: CHAT,
    stream: true,
    native: false,
    tokenField: 'max_tokens',
  },
  {
    id: 'cloudf.mantle.vendorb.chat.v1',
    primitive: 'chat-completions',
    creatable: true,
    unsupported: CHAT,
    stream: true,
    native: false,
    tokenField: 'max_completion_tokens',
  },
  {
    id: 'cloudf.mantle.responses.v1',
    primitive: 'responses',
    creatable: true,
    unsupported: MANTLE_RESPONSES,
    stream: true,
    native: false,
    noStreamWithTools: true,
  },
  {
    id: 'cloudf.mantle.vendorb.responses.v1',
    primitive: 'responses',
    creatable: true,
    unsupported: MANTLE_RESPONSES,
    stream: true,
    native: false,
    noStreamWithTools: true,
  },
  {
    id: 'cloudf.mantle.vendora.messages.v1',
    primitive: 'messages',
    creatable: true,
    unsupported: ['output_config.effort', 'output_config.format'],
    stream: true,
    native: true,
  },
  {
    id: 'vendorg.vendora.messages.v1',
    primitive: 'messages',
    creatable: true,
    unsupported: ['top_k', 'stop_sequences', 'output_config.effort', 'output_config.format'],
    stream: true,
    native: true,
    nativeRejects: ['top_k', 'stop_sequences', 'cache_control'],
  },
  {
    // Matrix: max_tokens unsupported; DESIGN: max_tokens carried, effort-bearing requests routed away.
    id: 'vendorg.chat.v1',
    primitive: 'chat-completions',
    creatable: true,
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
    native: false,
    tokenField: 'max_tokens',
  },
  {
    id: 'vendorg.responses.v1',
    primitive: 'responses',
    creatable: true,
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
    native: false,
  },
  {
    // Matrix: max_tokens and stop_sequences unsupported; DESIGN: max_tokens carried (as
    // max_completion_tokens), stop_sequences carried within 5 x 32 bytes, effort routed away.
    id: 'vendorh.chat.v1',
    primitive: 'chat-completions',
    creatable: true,
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
    native: false,
    tokenField: 'max_completion_tokens',
    stopFiveOf32: true,
  },
  {
    id: 'vendorh.vendora.messages.v1',
    primitive: 'messages',
    creatable: true,
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
    native: true,
    nativeRejects: ['temperature', 'top_p', 'top_k', 'cache_control'],
  },
  {
    id: 'vendorh.responses.v1',
    primitive: 'responses',
    creatable: false,
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
    native: false,
  },
];

export const CREATABLE_PROFILES = EXPECTED_PROFILES.filter((row) => row.creatable);

/**
 * Content the portable primitives carry (not part of the SPEC matrix, which lists fields only;
 * written from the wire notes in shared/protocols): chat-completions carries text documents (as
 * text) and images by data URL or URL; stateless responses carry images (input_image) but no
 * documents; generate-content text carries inline (base64) images only and no tool history
 * (rule 5 / the row's notes); messages carry everything.
 */
export type ContentKind = 'tool_history' | 'document_text' | 'document_pdf' | 'image_base64' | 'image_url';

export const CONTENT_CARRIED: Record<Exclude<ExpectedPrimitive, 'converse'>, Record<ContentKind, boolean>> = {
  messages: {
    tool_history: true,
    document_text: true,
    document_pdf: true,
    image_base64: true,
    image_url: true,
  },
  'chat-completions': {
    tool_history: true,
    document_text: true,
    document_pdf: false,
    image_base64: true,
    image_url: true,
  },
  responses: {
    tool_history: true,
    document_text: false,
    document_pdf: false,
    image_base64: true,
    image_url: true,
  },
  'generate-content': {
    tool_history: false,
    document_text: false,
    document_pdf: false,
    image_base64: true,
    image_url: false,
  },
};
