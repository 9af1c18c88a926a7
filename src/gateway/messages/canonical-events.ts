/**
 * The canonical stream of MessagesService.serve (vendora SSE text) decoded back into stream events,
 * for a face that renders them in its own wire after the stream's text is written (the experimental
 * /v1/responses face on any wire). /v1/chat/completions renders the events as they are translated
 * instead (ServeInput.renderEvents), with no text read back. An event whose data is not JSON is
 * skipped (the serve path writes only JSON data).
 */
import type { StreamEvent } from '../../canonical/types.js';
import { createSseDecoder } from '../../primitives/shared/sse.js';

/** The events of each piece of canonical text, one batch per piece (a face writes each batch at once). */
export async function* canonicalEventBatches(frames: AsyncGenerator<string>): AsyncGenerator<StreamEvent[]> {
  let batch: StreamEvent[] = [];
  const decoder = createSseDecoder((sse) => {
    try {
      batch.push(JSON.parse(sse.data) as StreamEvent);
    } catch {
      // not JSON: skipped
    }
  });
  for await (const text of frames) {
    decoder.feed(text);
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  decoder.end();
  if (batch.length > 0) yield batch;
}

export async function* canonicalEvents(frames: AsyncGenerator<string>): AsyncGenerator<StreamEvent> {
  for await (const batch of canonicalEventBatches(frames)) yield* batch;
}
