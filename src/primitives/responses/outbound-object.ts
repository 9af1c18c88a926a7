/**
 * The responses-wire Response object the gateway answers with when it serves /v1/responses from a
 * canonical answer (protocols 3.5, 5.4): shared by the non-streaming translation and the lifecycle
 * events of the stream translation, so both describe the same response. Pure: ids and times come
 * in through the context.
 */
import type { StopReason, Usage } from '../../canonical/types.js';

export interface OutboundContext {
  /** `resp_...`; output item ids are derived from it. */
  responseId: string;
  /** Unix seconds. */
  createdAt: number;
  /** Unix seconds, stamped on terminal objects. */
  completedAt: number;
  /** The alias the client asked for. */
  model: string;
  background: boolean;
  /** The client's request body, whose parameters the Response object echoes. */
  request: Record<string, unknown>;
}

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: [];
}

export type OutputItem =
  | {
      type: 'message';
      id: string;
      role: 'assistant';
      status: 'in_progress' | 'completed' | 'incomplete';
      content: OutputTextPart[];
    }
  | { type: 'reasoning'; id: string; summary: Array<{ type: 'summary_text'; text: string }> }
  | {
      type: 'function_call';
      id: string;
      call_id: string;
      name: string;
      arguments: string;
      status: 'in_progress' | 'completed' | 'incomplete';
    };

export interface WireUsageOut {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  background: boolean;
  model: string;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  output: OutputItem[];
  usage: WireUsageOut | null;
  [echo: string]: unknown;
}

/** `msg_<id>_<n>`, `fc_<id>_<n>`, `rs_<id>_<n>`: stable per response and output index. */
export function itemId(context: OutboundContext, prefix: 'msg' | 'fc' | 'rs', outputIndex: number): string {
  return `${prefix}_${context.responseId.replace(/^resp_/, '')}_${outputIndex}`;
}

/** The wire counts cache reads and writes inside input_tokens; the canonical usage does not. */
export function wireUsage(usage: Usage): WireUsageOut {
  const input = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: usage.cache_read_input_tokens,
      cache_write_tokens: usage.cache_creation_input_tokens,
    },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.output_tokens,
  };
}

/** max_tokens -> incomplete (max_output_tokens); refusal -> incomplete (content_filter); else completed. */
export function terminalOf(
  stopReason: StopReason | null,
): Pick<ResponseObject, 'status' | 'incomplete_details'> {
  if (stopReason === 'max_tokens' || stopReason === 'model_context_window_exceeded') {
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  }
  if (stopReason === 'refusal')
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const ECHO_DEFAULTS: Record<string, unknown> = {
  instructions: null,
  max_output_tokens: null,
  metadata: {},
  parallel_tool_calls: true,
  temperature: null,
  top_p: null,
  tool_choice: 'auto',
  tools: [],
  text: { format: { type: 'text' } },
  reasoning: { effort: null, summary: null },
};

export interface ObjectState {
  status: ResponseStatus;
  output: OutputItem[];
  usage: Usage | null;
  incomplete_details?: ResponseObject['incomplete_details'];
  error?: ResponseObject['error'];
}

export function responseObject(context: OutboundContext, state: ObjectState): ResponseObject {
  const echo = Object.fromEntries(
    Object.entries(ECHO_DEFAULTS).map(([field, fallback]) => [field, context.request[field] ?? fallback]),
  );
  const terminal = state.status !== 'queued' && state.status !== 'in_progress';
  return {
    id: context.responseId,
    object: 'response',
    created_at: context.createdAt,
    completed_at: terminal ? context.completedAt : null,
    status: state.status,
    background: context.background,
    model: context.model,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    ...echo,
    store: false,
    truncation: 'disabled',
    output: state.output,
    usage: state.usage === null ? null : wireUsage(state.usage),
  };
}
