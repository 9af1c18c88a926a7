/**
 * Canonical stream events -> `chat.completion.chunk` server-sent events (the outbound direction,
 * POST /v1/chat/completions with stream: true). Data-only events, as the chat wire sends them:
 * - message_start: the first chunk, `delta: {role: assistant, content: ""}`;
 * - text deltas: `delta.content`; a tool_use block's start: `delta.tool_calls[{index, id, type,
 *   function: {name, arguments: ""}}]`, its input_json deltas: `function.arguments` pieces under
 *   the same index (tool calls are numbered 0.. in order); thinking is dropped;
 * - message_delta: a chunk with an empty delta and the `finish_reason`;
 * - message_stop: with include_usage, a last chunk with `choices: []` and the usage (every other
 *   chunk then carries `usage: null`), then `data: [DONE]`;
 * - an error event: `data: {"error": {...}}` (the SDK raises it) and nothing after it.
 */
import type { StreamEvent, Usage } from '../../canonical/types.js';
import { ZERO_USAGE } from '../../canonical/types.js';
import type { ChatOutboundContext } from './outbound-response.js';
import { finishReasonOf } from './stop-reason.js';
import { chatUsageOf } from './usage.js';

/** The chat error object a mid-stream canonical error becomes. */
export type ChatStreamError = (error: { type: string; message: string; code?: string | undefined }) => {
  message: string;
  type: string;
  param: null;
  code: string | null;
};

export const DONE_FRAME = 'data: [DONE]\n\n';

const frame = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;

export class ChatChunkWriter {
  private usage: Usage = { ...ZERO_USAGE };
  private toolCalls = 0;
  /** Canonical block index -> tool call index, for tool_use blocks. */
  private readonly toolIndex = new Map<number, number>();
  private finished = false;
  /** Every chunk's text up to its delta, and after its finish reason: the same for the whole stream. */
  private readonly head: string;
  private readonly tail: string;

  constructor(
    private readonly context: ChatOutboundContext,
    private readonly includeUsage: boolean,
    private readonly errorOf: ChatStreamError,
  ) {
    // JSON.stringify of {id, object, created, model, choices: [{index, delta, logprobs, finish_reason}], usage?},
    // cut around the parts that change (the delta and the finish reason).
    const envelope = JSON.stringify({
      id: context.id,
      object: 'chat.completion.chunk',
      created: context.created,
      model: context.model,
      choices: [],
    });
    this.head = `data: ${envelope.slice(0, -'[]}'.length)}[{"index":0,"delta":`;
    this.tail = `}]${includeUsage ? ',"usage":null' : ''}}\n\n`;
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
    const finish = finishReason === null ? 'null' : JSON.stringify(finishReason);
    return `${this.head}${JSON.stringify(delta)},"logprobs":null,"finish_reason":${finish}${this.tail}`;
  }

  private addUsage(usage: Partial<Usage> | undefined): void {
    if (usage === undefined) return;
    for (const field of Object.keys(ZERO_USAGE) as Array<keyof Usage>) {
      const value = usage[field];
      if (typeof value === 'number') this.usage[field] = value;
    }
  }

  /** The SSE text one canonical event becomes (often none). */
  event(event: StreamEvent): string {
    if (this.finished) return '';
    switch (event.type) {
      case 'message_start':
        this.addUsage(event.message.usage);
        return this.chunk({ role: 'assistant', content: '' });
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type !== 'tool_use') return '';
        const index = this.toolCalls++;
        this.toolIndex.set(event.index, index);
        return this.chunk({
          tool_calls: [
            { index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } },
          ],
        });
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta')
          return delta.text.length > 0 ? this.chunk({ content: delta.text }) : '';
        if (delta.type === 'input_json_delta') {
          const index = this.toolIndex.get(event.index);
          if (index === undefined || delta.partial_json.length === 0) return '';
          return this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
        }
        return '';
      }
      case 'message_delta':
        this.addUsage(event.usage);
        return this.chunk({}, finishReasonOf(event.delta.stop_reason));
      case 'message_stop': {
        this.finished = true;
        const usage = this.includeUsage
          ? frame({
              id: this.context.id,
              object: 'chat.completion.chunk',
              created: this.context.created,
              model: this.context.model,
              choices: [],
              usage: chatUsageOf(this.usage),
            })
          : '';
        return usage + DONE_FRAME;
      }
      case 'error':
        this.finished = true;
        return frame({ error: this.errorOf(event.error) });
      default:
        return '';
    }
  }
}
