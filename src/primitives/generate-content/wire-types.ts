/**
 * The generate-content wire shapes this primitive sends and reads (field names as in the public
 * `@google/genai` SDK types, developer API `v1beta`). What we send is typed exactly; what the
 * upstream sends is read leniently: proto3 JSON omits zero counts and default fields, so every
 * field is optional and a missing count reads as 0.
 */

export type RequestPart = { text: string } | { inlineData: { mimeType: string; data: string } };

export interface Content {
  role: 'user' | 'model';
  parts: RequestPart[];
}

export interface GenerationConfig {
  maxOutputTokens: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  /** Always sent, see options.ts: the upstream may otherwise think on its own. */
  thinkingConfig: { thinkingBudget: number };
}

export interface GenerateContentRequestBody {
  contents: Content[];
  systemInstruction?: { parts: Array<{ text: string }> };
  generationConfig: GenerationConfig;
}

/** A response part as the upstream sends it (one data member plus optional modifiers). */
export interface WirePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: unknown;
  inlineData?: unknown;
  [member: string]: unknown;
}

export interface WireCandidate {
  content?: { role?: string; parts?: WirePart[] };
  finishReason?: string;
  index?: number;
}

export interface WireUsageMetadata {
  /** Includes cachedContentTokenCount. */
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  /** Excludes thinking. */
  candidatesTokenCount?: number;
  /** Thinking, billed as output. */
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface WireGenerateContentResponse {
  candidates?: WireCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: WireUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** Google RPC status body of an HTTP error. */
export interface WireErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: unknown[] };
}
