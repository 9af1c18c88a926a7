/**
 * What the simulated chat-completions upstream answers, as functions of the request body and the
 * behaviour: the `chat.completion` body and the stream's SSE frames (see chat-completions.ts for
 * the faithful points and the default usage).
 */
import { randomBytes } from 'node:crypto';
import type { SimBehaviour } from '../types.js';
import { DEFAULT_TEXT, estimateOutputTokens, split } from './messages-answer.js';

type Body = Record<string, unknown>;

export interface Answer {
  id: string;
  created: number;
  model: string;
  text: string | undefined;
  calls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

const FINISH_REASONS = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
} as const satisfies Record<NonNullable<SimBehaviour['stopReason']>, Answer['finishReason']>;

export function planAnswer(body: Body, behaviour: SimBehaviour): Answer {
  const calls = (behaviour.toolCalls ?? []).map((tool) => {
    const json = JSON.stringify(tool.input);
    return {
      id: tool.id ?? `call_${alphanumeric(24)}`,
      name: tool.name,
      arguments: behaviour.invalidToolJson === true ? `${json.slice(0, -1)},` : json,
    };
  });
  const text = behaviour.text ?? (calls.length > 0 ? undefined : DEFAULT_TEXT);
  const stopReason = behaviour.stopReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
  const given = behaviour.usage ?? {};
  return {
    id: `chatcmpl-${alphanumeric(29)}`,
    created: Math.floor(Date.now() / 1000),
    model: behaviour.answerModel ?? (body.model as string),
    text,
    calls,
    finishReason: FINISH_REASONS[stopReason],
    usage: {
      input: given.input_tokens ?? Math.max(1, Math.ceil(textBytes(body.messages) / 4)),
      output:
        given.output_tokens ??
        estimateOutputTokens(
          text,
          calls.map((call) => call.arguments),
          body.max_completion_tokens ?? body.max_tokens,
        ),
      cacheRead: given.cache_read_input_tokens ?? 0,
      cacheWrite: given.cache_creation_input_tokens ?? 0,
    },
  };
}

/** UTF-8 bytes of the texts the messages carry (content strings, text parts, tool-call arguments). */
function textBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textBytes(item), 0);
  if (!isRecord(value)) return 0;
  const functionCall = isRecord(value.function) ? value.function.arguments : undefined;
  return (
    textBytes(value.text) + textBytes(value.content) + textBytes(value.tool_calls) + textBytes(functionCall)
  );
}

function usageBody(usage: Answer['usage']): Body {
  const prompt = usage.input + usage.cacheRead + usage.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.output,
    total_tokens: prompt + usage.output,
    prompt_tokens_details: {
      cached_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheWrite,
      audio_tokens: 0,
    },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function envelope(answer: Answer, object: 'chat.completion' | 'chat.completion.chunk'): Body {
  return {
    id: answer.id,
    object,
    created: answer.created,
    model: answer.model,
    system_fingerprint: 'fp_simulator',
    service_tier: 'default',
  };
}

export function completionBody(answer: Answer): Body {
  const message: Body = { role: 'assistant', content: answer.text ?? null, refusal: null, annotations: [] };
  if (answer.calls.length > 0) {
    message.tool_calls = answer.calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    ...envelope(answer, 'chat.completion'),
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.finishReason }],
    usage: usageBody(answer.usage),
  };
}

/**
 * The SSE frames: role chunk, text deltas, tool-call deltas (each call's header then its argument
 * fragments; several calls round-robin so their fragments interleave), finish chunk, usage chunk
 * when asked for, `[DONE]`. `omitFinish` ends after the content, with no finish, usage or [DONE].
 */
export function streamFrames(body: Body, answer: Answer, behaviour: SimBehaviour): string[] {
  const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  const chunk = (choices: Body[], usage: Body | null = null): string => {
    const fields = {
      ...envelope(answer, 'chat.completion.chunk'),
      choices,
      ...(includeUsage ? { usage } : {}),
    };
    return `data: ${JSON.stringify(fields)}\n\n`;
  };
  const delta = (fields: Body, finishReason: string | null = null): string =>
    chunk([{ index: 0, delta: fields, logprobs: null, finish_reason: finishReason }]);

  const frames = [delta({ role: 'assistant', content: '', refusal: null })];
  for (const piece of split(answer.text ?? '', behaviour.deltas ?? 4)) frames.push(delta({ content: piece }));
  for (const toolCall of interleavedToolCalls(answer.calls)) frames.push(delta({ tool_calls: [toolCall] }));
  if (behaviour.omitFinish === true) return frames;
  frames.push(delta({}, answer.finishReason));
  if (includeUsage) frames.push(chunk([], usageBody(answer.usage)));
  frames.push('data: [DONE]\n\n');
  return frames;
}

function interleavedToolCalls(calls: Answer['calls']): Body[] {
  const queues = calls.map((call, index) => [
    { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
    ...split(call.arguments, 3).map((fragment) => ({ index, function: { arguments: fragment } })),
  ]);
  const ordered: Body[] = [];
  while (queues.some((queue) => queue.length > 0)) {
    for (const queue of queues) {
      const next = queue.shift();
      if (next !== undefined) ordered.push(next);
    }
  }
  return ordered;
}

function alphanumeric(length: number): string {
  return randomBytes(length * 2)
    .toString('base64')
    .replace(/[^a-zA-Z0-9]/g, '')
    .slice(0, length);
}

function isRecord(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
