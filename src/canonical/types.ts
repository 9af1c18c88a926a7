/**
 * The canonical model: the vendora Messages wire shapes (request, response, stream events).
 *
 * Every model call is validated into a `MessagesRequest`, routed, translated by a primitive into its
 * wire and translated back into a `MessageResponse` or a sequence of `StreamEvent`s. Field names are
 * the wire's own (snake_case) so a vendora-wire upstream needs no translation at all.
 */
import type { ErrorType } from '../errors/catalogue.js';

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlock {
  type: 'text';
  text: string;
  citations?: unknown[] | null;
  cache_control?: CacheControl | null;
}

export type ImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface ImageBlock {
  type: 'image';
  source: ImageSource;
  cache_control?: CacheControl | null;
}

export type DocumentSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'text'; media_type: string; data: string }
  | { type: 'content'; content: string | Array<TextBlock | ImageBlock> }
  | { type: 'url'; url: string }
  | { type: 'file'; file_id: string };

export interface DocumentBlock {
  type: 'document';
  source: DocumentSource;
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControl | null;
}

export interface SearchResultBlock {
  type: 'search_result';
  source: string;
  title: string;
  content: TextBlock[];
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControl | null;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  cache_control?: CacheControl | null;
}

export type ToolResultContentBlock = TextBlock | ImageBlock | SearchResultBlock | DocumentBlock;

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ToolResultContentBlock[];
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type ContentBlockParam =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | SearchResultBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock;

export type ContentBlockType = ContentBlockParam['type'];

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlockParam[];
}

/** A client tool defined by the caller (`type` omitted or `custom`). */
export interface CustomTool {
  type?: 'custom';
  name: string;
  description?: string;
  input_schema: { type: 'object'; [key: string]: unknown };
  strict?: boolean;
  cache_control?: CacheControl | null;
}

/** A vendora-defined tool (`bash_20250124`, `text_editor_20250728`, `web_search_20250305`, ...). */
export interface DefinedTool {
  type: string;
  name: string;
  [key: string]: unknown;
}

export type Tool = CustomTool | DefinedTool;

export type ToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: 'summarized' | 'omitted' }
  | { type: 'disabled' }
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' };

export type Effort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface OutputFormat {
  type: 'json_schema';
  schema: Record<string, unknown>;
}

export interface OutputConfig {
  effort?: Effort | null;
  format?: OutputFormat | null;
}

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlock[];
  stream?: boolean;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  thinking?: ThinkingConfig;
  metadata?: { user_id?: string | null };
  service_tier?: 'auto' | 'standard_only';
  output_config?: OutputConfig;
}

/** Request of POST /v1/messages/count_tokens. */
export interface CountTokensRequest {
  model: string;
  messages: MessageParam[];
  system?: string | TextBlock[];
  tools?: Tool[];
  tool_choice?: ToolChoice;
  thinking?: ThinkingConfig;
  output_config?: OutputConfig;
}

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type ResponseContentBlock =
  | { type: 'text'; text: string; citations?: unknown[] | null }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

export interface MessageResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  content: ResponseContentBlock[];
  model: string;
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: Usage;
}

export type ContentDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

/** The vendora `error.type` values: the error catalogue's vocabulary (errors/catalogue.ts), used here by stream errors. */
export type { ErrorType };

export type StreamEvent =
  | { type: 'message_start'; message: MessageResponse }
  | { type: 'content_block_start'; index: number; content_block: ResponseContentBlock }
  | { type: 'content_block_delta'; index: number; delta: ContentDelta }
  | { type: 'content_block_stop'; index: number }
  | {
      type: 'message_delta';
      delta: { stop_reason: StopReason | null; stop_sequence: string | null };
      usage: Partial<Usage> & { output_tokens: number };
    }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | { type: 'error'; error: { type: ErrorType; message: string; code?: string } };

export const ZERO_USAGE: Usage = Object.freeze({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
});
