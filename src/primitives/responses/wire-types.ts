/**
 * The responses wire shapes this primitive sends and reads (field names as in the public `openai`
 * SDK types, `client.responses.*`). What we send is typed exactly; what the upstream sends is read
 * leniently: every field we do not rely on is optional and unknown members are ignored.
 */

export interface InputTextPart {
  type: 'input_text';
  text: string;
}

export interface InputImagePart {
  type: 'input_image';
  /** A URL or a `data:` URI. */
  image_url: string;
  detail: 'auto';
}

export type InputPart = InputTextPart | InputImagePart;

export interface OutputTextPart {
  type: 'output_text';
  text: string;
  annotations: [];
}

export type InputItem =
  | { type: 'message'; role: 'user'; content: InputPart[] }
  | { type: 'message'; role: 'assistant'; content: OutputTextPart[] }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | InputPart[] };

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  /** Always sent: the upstream reportedly turns strict mode on when it is omitted. */
  strict: boolean;
}

export type ResponsesToolChoice = 'auto' | 'required' | 'none' | { type: 'function'; name: string };

export interface JsonSchemaTextFormat {
  type: 'json_schema';
  name: string;
  schema: Record<string, unknown>;
  strict: true;
}

export interface ResponsesRequestBody {
  model: string;
  instructions?: string;
  input: InputItem[];
  tools?: FunctionTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: false;
  max_output_tokens: number;
  temperature?: number;
  top_p?: number;
  text?: { format: JsonSchemaTextFormat };
  /** Stateless use: nothing is kept upstream (the wire's default is true). */
  store: false;
  stream?: true;
}

/** `status` of a Response object. */
export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled' | 'incomplete';

export interface WireUsage {
  /** Includes `input_tokens_details.cached_tokens` and `cache_write_tokens`. */
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  /** Includes `output_tokens_details.reasoning_tokens`. */
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

export interface WireError {
  code?: string | null;
  message?: string;
  type?: string;
  param?: string | null;
}

export type WireContentPart =
  | { type: 'output_text'; text: string }
  | { type: 'refusal'; refusal: string }
  | { type: string; [key: string]: unknown };

/** Output items this primitive reads; any other item type is ignored (see response.ts). */
export type WireOutputItem =
  | { type: 'message'; id?: string; role?: 'assistant'; content?: WireContentPart[] }
  | { type: 'function_call'; id?: string; call_id: string; name: string; arguments?: string }
  | { type: string; id?: string; [key: string]: unknown };

export interface WireResponse {
  id?: string;
  object?: 'response';
  status?: ResponseStatus;
  model?: string;
  output?: WireOutputItem[];
  usage?: WireUsage | null;
  error?: WireError | null;
  incomplete_details?: { reason?: string } | null;
}
