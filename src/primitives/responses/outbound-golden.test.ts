/**
 * Golden fixtures (__fixtures__/inbound, __fixtures__/outbound) of /v1/responses served from any
 * wire: responses request -> canonical request; canonical message -> Response object; canonical
 * stream -> responses stream events. The streams are also read back with the vendorb SDK's own
 * accumulator (ResponseStream), and their final Response must equal the non-streaming
 * translation of the same answer reassembled by the vendora SDK (MessageStream).
 * Regenerate after a deliberate change: `UPDATE_FIXTURES=1 npx vitest run <this file>`.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import { describe, expect, it } from 'vitest';
import type { MessageResponse, StreamEvent } from '../../canonical/types.js';
import { validateMessagesRequest } from '../../canonical/validate-messages.js';
import { goldenFixtures, reassemble } from '../shared/golden-fixtures.js';
import { frame } from '../shared/types.js';
import { ResponsesInputError, responsesRequestToCanonical } from './inbound-request.js';
import type { OutboundContext } from './outbound-object.js';
import { canonicalToResponsesResponse } from './outbound-response.js';
import { createOutboundStreamTranslator } from './outbound-stream.js';
import type { ResponsesServerEvent } from './server-events.js';

const { json: readJson, directory: FIXTURES } = goldenFixtures('responses');
const UPDATE = process.env.UPDATE_FIXTURES === '1';
const CONTEXT = readJson('outbound/context.json') as OutboundContext;

function cases(folder: string, suffix: string): string[] {
  return readdirSync(new URL(`${folder}/`, FIXTURES))
    .filter((file) => file.endsWith(suffix))
    .map((file) => file.slice(0, -suffix.length))
    .sort();
}

function expectGolden(name: string, actual: unknown): void {
  const path = new URL(name, FIXTURES);
  if (UPDATE || !existsSync(path)) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
  expect(actual).toEqual(readJson(name));
}

function runStream(events: StreamEvent[]): ResponsesServerEvent[] {
  const translator = createOutboundStreamTranslator(CONTEXT);
  return [...events.flatMap((event) => translator.push(event)), ...translator.end()];
}

/** The vendorb SDK's accumulator over our events (it enforces the wire's ordering rules). */
async function sdkFinal(events: ResponsesServerEvent[]) {
  const text = events.map((event) => `${JSON.stringify(event)}\n`).join('');
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });
  return ResponseStream.fromReadableStream(readable).finalResponse();
}

/** Streamed arguments keep the upstream's spacing; compare them as JSON values. */
function withParsedArguments(response: { output: unknown[] }): unknown {
  return {
    ...response,
    output: response.output.map((item) =>
      (item as { type: string }).type === 'function_call'
        ? { ...(item as object), arguments: JSON.parse((item as { arguments: string }).arguments) }
        : item,
    ),
  };
}

describe('inbound request fixtures', () => {
  it.each(cases('inbound', '.input.json'))('%s', (name) => {
    const body = readJson(`inbound/${name}.input.json`) as Record<string, unknown>;
    const canonical = responsesRequestToCanonical(body, { defaultMaxOutputTokens: 1024 });
    expectGolden(`inbound/${name}.expected.json`, canonical);
    // What comes out is a request the canonical validation accepts as it is.
    expect(validateMessagesRequest(JSON.parse(JSON.stringify(canonical)), 'portable')).toEqual(canonical);
  });

  it('names the field it cannot carry', () => {
    const refuse = (body: Record<string, unknown>) => () =>
      responsesRequestToCanonical({ model: 'm', max_output_tokens: 5, ...body });
    expect(refuse({ input: [{ type: 'item_reference', id: 'x' }] })).toThrow(
      new ResponsesInputError('input[0].type', 'input items of type item_reference are not supported'),
    );
    expect(refuse({ input: 'hi', tools: [{ type: 'web_search' }] })).toThrow(
      /tools\[0\]\.type: only function tools/,
    );
    expect(refuse({ input: 'hi', text: { format: { type: 'json_object' } } })).toThrow(/text\.format/);
    expect(refuse({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] })).toThrow(
      /input\[0\]\.content\[0\]\.image_url/,
    );
    expect(refuse({ input: [{ type: 'function_call', call_id: 'c', name: 'n', arguments: '[1]' }] })).toThrow(
      /input\[0\]\.arguments: must be the JSON text of an object/,
    );
    expect(() => responsesRequestToCanonical({ model: 'm', input: 'hi' })).toThrow(
      /max_output_tokens: required/,
    );
    expect(refuse({ input: [{ type: 'reasoning', summary: [] }] })).toThrow(/input: holds no message/);
  });
});

describe('outbound response fixtures', () => {
  it.each(cases('outbound', '.canonical.json'))('%s', (name) => {
    const message = readJson(`outbound/${name}.canonical.json`) as MessageResponse;
    expectGolden(`outbound/${name}.expected.json`, canonicalToResponsesResponse(message, CONTEXT));
  });
});

describe('outbound stream fixtures', () => {
  it.each(cases('outbound', '.events.json'))('%s', async (name) => {
    const canonical = readJson(`outbound/${name}.events.json`) as StreamEvent[];
    const events = runStream(canonical);
    expectGolden(`outbound/${name}.expected.json`, events);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const terminal = events.at(-1)!;
    expect(['response.completed', 'response.incomplete', 'response.failed']).toContain(terminal.type);
    if (terminal.type !== 'response.completed' && terminal.type !== 'response.incomplete') return;
    expect(await sdkFinal(events)).toMatchObject({
      id: CONTEXT.responseId,
      output: terminal.response.output,
    });
    const message = await reassemble(canonical.map(frame));
    const expected = canonicalToResponsesResponse(message as MessageResponse, CONTEXT);
    expect(withParsedArguments(terminal.response)).toEqual(withParsedArguments(expected));
  });
});
