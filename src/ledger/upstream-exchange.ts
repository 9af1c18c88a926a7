/**
 * What the attempt runner asks of a use case's upstream call (send it, read its error status, read
 * its answer or translate its stream) and what a background call hands back before its job settles
 * it. Types only, shared by the runner and the background verbs (background-attempt.ts).
 */
import type { ErrorType } from '../canonical/types.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { CancelSignal } from '../lib/cancel-signal.js';
import type { AttemptUsage, Settlement } from '../money/settlement.js';
import type { UpstreamResponse } from '../primitives/shared/upstream-call.js';

/** What a use case makes of an upstream error status. */
export interface RefusalInfo {
  status: number;
  message: string;
  /** Absent: the error code's catalogue type. */
  type?: ErrorType | undefined;
  retryAfter?: string | undefined;
  retryable: boolean;
}

/** A 2xx answer as read by the use case. */
export interface ReadAnswer<Answer> {
  answer: Answer;
  /** The actual cost; null when it cannot be known (settled unknown, the answer still returned). */
  costMicrosUsd: number | null;
  usage: AttemptUsage | null;
  /** The model the answer says answered (observability only: gen_ai.response.model). */
  responseModel?: string | null;
}

/** A streamed answer as translated by the use case (one per call). */
export interface StreamReader {
  /** Client text for one upstream chunk ('' when it completes nothing). */
  push(chunk: Buffer): string;
  /** Whether the text returned so far holds the stream's final event (message_stop): only the end follows. */
  finished(): boolean;
  /** At the upstream's end: the remaining text and whether the answer is complete (terminal event, no error). */
  end(): { text: string; complete: boolean };
  /** Client text telling of an interruption ('' when the stream already carried an error). */
  interrupted(error: unknown | undefined): string;
  /** Usage seen so far and its cost. */
  usage(): AttemptUsage | null;
  cost(usage: AttemptUsage): number;
  /** The model the stream says answered, once an event named one (observability only). */
  responseModel?(): string | undefined;
}

export interface UpstreamExchange<Answer> {
  /** Builds and sends the wire call. Throws NotSentError before sending, UpstreamFailure after. */
  send(signal: CancelSignal | undefined): Promise<UpstreamResponse>;
  /** Reads an error status (the body is already read: JSON, text or undefined). */
  refusal(status: number, body: unknown, headers: UpstreamResponse['headers']): RefusalInfo;
  /** Reads a 2xx answer; throws when it cannot (settled unknown). A GatewayError thrown is the client's error. */
  read(response: UpstreamResponse): Promise<ReadAnswer<Answer>>;
  /** Streamed calls: the translator of the answer. */
  stream?(response: UpstreamResponse): StreamReader;
}

/** When the answer's headers arrived (clock ms) and the upstream's request id, for the request log. */
export interface AnswerSeen {
  atMs: number;
  upstreamRequestId: string | null;
}

/** A background call's result, before its job settles it (background-attempt.ts). */
export type HeldResult<Answer> =
  | {
      kind: 'answered';
      answer: Answer;
      settlement: Settlement;
      responseModel: string | null;
      seen?: AnswerSeen | undefined;
    }
  | {
      kind: 'failed';
      error: GatewayError;
      settlement: Settlement;
      retryable: boolean;
      seen?: AnswerSeen | undefined;
    }
  | { kind: 'aborted' };
