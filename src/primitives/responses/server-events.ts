/**
 * The responses-wire stream events the gateway sends when it serves /v1/responses with
 * `stream: true` (protocols 3.6): named events, each with an increasing `sequence_number`,
 * lifecycle events carrying the whole Response object, and no `[DONE]` after the terminal event.
 */
import type { OutputItem, OutputTextPart, ResponseObject } from './outbound-object.js';

type Located = { item_id: string; output_index: number };
type SummaryPart = { type: 'summary_text'; text: string };

export type ResponsesServerEventBody =
  | {
      type:
        | 'response.created'
        | 'response.in_progress'
        | 'response.completed'
        | 'response.incomplete'
        | 'response.failed';
      response: ResponseObject;
    }
  | {
      type: 'response.output_item.added' | 'response.output_item.done';
      output_index: number;
      item: OutputItem;
    }
  | ({
      type: 'response.content_part.added' | 'response.content_part.done';
      content_index: number;
      part: OutputTextPart;
    } & Located)
  | ({ type: 'response.output_text.delta'; content_index: number; delta: string; logprobs: [] } & Located)
  | ({ type: 'response.output_text.done'; content_index: number; text: string; logprobs: [] } & Located)
  | ({
      type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
      summary_index: number;
      part: SummaryPart;
    } & Located)
  | ({ type: 'response.reasoning_summary_text.delta'; summary_index: number; delta: string } & Located)
  | ({ type: 'response.reasoning_summary_text.done'; summary_index: number; text: string } & Located)
  | ({ type: 'response.function_call_arguments.delta'; delta: string } & Located)
  | ({ type: 'response.function_call_arguments.done'; name: string; arguments: string } & Located);

export type ResponsesServerEvent = ResponsesServerEventBody & { sequence_number: number };
