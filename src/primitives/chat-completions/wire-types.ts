/**
 * The chat-completions wire shapes this primitive sends and reads (field names as in the public
 * `openai` SDK types). Upstream shapes are read leniently: every field we do not rely on is optional.
 */

export interface ChatTextPart {
  type: 'text';
  text: string;
}

export interface ChatImagePart {
  type: 'image_url';
  image_url: { url: string };
}

export type ChatUserPart = ChatTextPart | ChatImagePart;

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatUserPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export type ChatToolChoice = 'auto' | 'required' | 'none' | { type: 'function'; function: { name: string } };

export type ChatReasoningEffort = 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  max_completion_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  stream?: true;
  stream_options?: { include_usage: true };
  tools?: ChatFunctionTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: false;
  reasoning_effort?: ChatReasoningEffort;
  response_format?: {
    type: 'json_schema';
    json_schema: { name: string; schema: Record<string, unknown>; strict: true };
  };
}

/** `usage` of a `chat.completion` and of the final `chat.completion.chunk` (include_usage). */
export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatResponseToolCall {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletion {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices: Array<{
    index?: number;
    message?: {
      role?: string;
      content?: string | null;
      refusal?: string | null;
      tool_calls?: ChatResponseToolCall[] | null;
    };
    finish_reason?: string | null;
  }>;
  usage?: ChatUsage | null;
}

export interface ChatDeltaToolCall {
  index?: number;
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkChoice {
  index?: number;
  delta?: {
    role?: string;
    content?: string | null;
    refusal?: string | null;
    tool_calls?: ChatDeltaToolCall[] | null;
  };
  finish_reason?: string | null;
}

export interface ChatCompletionChunk {
  id?: string;
  object?: string;
  choices?: ChatChunkChoice[];
  usage?: ChatUsage | null;
  error?: { message?: string; type?: string; code?: string | null };
}
