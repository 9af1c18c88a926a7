/**
 * Canonical request -> generate-content body, sent to `/v1beta/models/{model}:generateContent` or
 * `:streamGenerateContent?alt=sse` (the connection base URL is the host root).
 *
 * Roles map user -> user and assistant -> model; consecutive same-role turns merge into one
 * Content (the wire historically demanded alternation). Empty client text is never sent (an
 * empty part can be a 400), so a turn left with no parts is something `generateContentCannotCarry`
 * refuses. Zero sampling values are sent as given (never truthiness-checked). Assumes
 * `generateContentCannotCarry(request)` returned undefined.
 */
import type { ContentBlockParam, ImageBlock, MessageParam, MessagesRequest } from '../../canonical/types.js';
import type { TranslateContext, WireRequest } from '../shared/types.js';
import type { GenerateContentOptions } from './options.js';
import type { Content, GenerateContentRequestBody, GenerationConfig, RequestPart } from './wire-types.js';

export function buildGenerateContentRequest(
  request: MessagesRequest,
  context: TranslateContext,
  options: GenerateContentOptions,
): WireRequest {
  const body: GenerateContentRequestBody = {
    contents: buildContents(request.messages),
    generationConfig: generationConfig(request, options),
  };
  const system = systemParts(request.system);
  if (system.length > 0) body.systemInstruction = { parts: system };
  const model = encodeURIComponent(context.upstreamModel);
  const path =
    request.stream === true
      ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
      : `/v1beta/models/${model}:generateContent`;
  return { path, body };
}

function generationConfig(request: MessagesRequest, options: GenerateContentOptions): GenerationConfig {
  const config: GenerationConfig = {
    maxOutputTokens: request.max_tokens,
    thinkingConfig: { thinkingBudget: options.thinkingBudget },
  };
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.top_p !== undefined) config.topP = request.top_p;
  if (request.top_k !== undefined) config.topK = request.top_k;
  if (request.stop_sequences !== undefined && request.stop_sequences.length > 0)
    config.stopSequences = request.stop_sequences;
  return config;
}

function systemParts(system: MessagesRequest['system']): Array<{ text: string }> {
  if (system === undefined) return [];
  const texts = typeof system === 'string' ? [system] : system.map((block) => block.text);
  return texts.filter((text) => text.length > 0).map((text) => ({ text }));
}

/** Messages -> contents, same-role neighbours merged. Pure; also used by the cannot-carry check. */
export function buildContents(messages: MessageParam[]): Content[] {
  const contents: Content[] = [];
  for (const message of messages) {
    const role = message.role === 'user' ? 'user' : 'model';
    const parts = messageParts(message.content);
    const last = contents.at(-1);
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}

function messageParts(content: string | ContentBlockParam[]): RequestPart[] {
  const blocks: ContentBlockParam[] =
    typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const parts: RequestPart[] = [];
  for (const block of blocks) {
    if (block.type === 'text') {
      if (block.text.length > 0) parts.push({ text: block.text });
    } else if (block.type === 'image') {
      parts.push(inlineImage(block));
    } else {
      throw new Error(
        `generate-content request: ${block.type} block (generateContentCannotCarry was skipped)`,
      );
    }
  }
  return parts;
}

function inlineImage(block: ImageBlock): RequestPart {
  if (block.source.type !== 'base64') {
    throw new Error(
      `generate-content request: ${block.source.type} image (generateContentCannotCarry was skipped)`,
    );
  }
  return { inlineData: { mimeType: block.source.media_type, data: block.source.data } };
}
