/**
 * The canonical stream of MessagesService.serve (vendora SSE text) decoded back into stream events,
 * for a face that renders them in its own wire (/v1/responses, /v1/chat/completions). An event
 * whose data is not JSON is skipped (the serve path writes only JSON data).
 */
import type { StreamEvent } from '../../canonical/types.js';
import { readSse } from '../../primitives/shared/sse.js';

export async function* canonicalEvents(frames: AsyncGenerator<string>): AsyncGenerator<StreamEvent> {
  for await (const sse of readSse(frames)) {
    let event: StreamEvent;
    try {
      event = JSON.parse(sse.data) as StreamEvent;
    } catch {
      continue;
    }
    yield event;
  }
}
