/**
 * What docs/observability.md promises about each attempt, checked on a real gateway and simulator,
 * a real /metrics scrape read strictly, and spans from an in-memory exporter:
 * - the response model: `gen_ai_response_model` and `gen_ai.response.model` are the model the
 *   upstream's answer names (the simulator answers a dated model, unlike the alias and the target's
 *   model), on every wire primitive, streamed and not; "" and no attribute when nothing answered;
 * - `gen_ai.first_chunk` on streamed attempts only;
 * - `error_type` / `error.type` always one of the documented classes, and each foreground class
 *   produced by the failure it names (the background ones are checked against the runner's details).
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SETTLEMENT_OUTCOMES } from '../../src/money/settlement.js';
import { ERROR_TYPES, errorClass } from '../../src/observability/error-types.js';
import { createObservability } from '../../src/observability/observability.js';
import { renderObservabilityDoc } from '../../src/observability/observability-doc.js';
import { type RunningTracing, startTracing } from '../../src/observability/tracing-sdk.js';
import type { SimBehaviour } from '../../src/simulator/types.js';
import {
  messageBody,
  PRICE,
  parseSse,
  postCountTokens,
  postMessages,
  startGateway,
  unusedPort,
} from '../messages/support.js';
import type { SimulatedGateway } from '../support/simulated-gateway.js';
import { type Sample, scrapeListener, total } from './support.js';

const WIRES = {
  messages: 'vendora.messages.2023-06-01',
  'chat-completions': 'vendorb.chat-embeddings.v1',
  responses: 'cloudf.mantle.vendorb.responses.v1',
  'generate-content': 'vendore.generate-content.text.v1beta',
} as const;

const exporter = new InMemorySpanExporter();
let tracing: RunningTracing;
let gateway: SimulatedGateway;
let key: string;
let deadPort: number;
let traceCount = 0;
const observability = createObservability({ metrics: true, tracing: true });

beforeAll(async () => {
  tracing = await startTracing({ serviceName: 'svc-test', sampleRatio: 1, exporter });
  deadPort = await unusedPort();
  gateway = await startGateway({
    observability,
    connections: (simulatorUrl) => [
      {
        name: 'slow',
        profile: WIRES.messages,
        base_url: simulatorUrl,
        auth: { scheme: 'none' },
        timeouts: { connect_ms: 1000, first_byte_ms: 300, idle_ms: 300 },
      },
      {
        name: 'dead',
        profile: WIRES.messages,
        base_url: `http://127.0.0.1:${deadPort}`,
        auth: { scheme: 'none' },
      },
    ],
    models: [
      { alias: 'slow', targets: [{ connection: 'slow', model: 'up-slow', price: PRICE }] },
      { alias: 'dead', targets: [{ connection: 'dead', model: 'up-dead', price: PRICE }] },
    ],
  });
  key = await gateway.key();
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await tracing?.shutdown();
});

beforeEach(() => {
  gateway.simulator.reset();
});

/** The whole process's view (the metrics listener): the GenAI families carry no Project label. */
async function scrape(): Promise<Sample[]> {
  return scrapeListener(observability.metrics!);
}

/** A model call in a trace of its own; its attempt spans once they ended. */
async function traced(
  body: Record<string, unknown>,
): Promise<{ status: number; text: string; attempts: ReadableSpan[] }> {
  const trace = (++traceCount).toString(16).padStart(32, 'a');
  const answer = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {
      'x-api-key': key,
      'vendora-version': '2023-06-01',
      'content-type': 'application/json',
      traceparent: `00-${trace}-b7ad6b7169203331-01`,
    },
    body: JSON.stringify(body),
  });
  const text = await answer.text();
  const name = `chat ${body.model as string}`;
  let attempts: ReadableSpan[] = [];
  for (let wait = 0; wait < 100 && attempts.length === 0; wait++) {
    attempts = exporter
      .getFinishedSpans()
      .filter((span) => span.spanContext().traceId === trace && span.name === name);
    if (attempts.length === 0) await new Promise((done) => setTimeout(done, 20));
  }
  return { status: answer.status, text, attempts };
}

describe('the response model', () => {
  for (const [wire, profile] of Object.entries(WIRES)) {
    for (const stream of [false, true]) {
      it(`${wire}${stream ? ', streamed' : ''}: from the upstream's answer on the metric series and the attempt span; the client still reads the alias`, async () => {
        const alias = `m:${profile}`;
        const answered = `${wire}-dated-2026-01-0${stream ? 2 : 1}`;
        gateway.simulator.setBehaviour({ answerModel: answered }, { model: `up-${profile}` });
        const result = await traced(messageBody(alias, stream ? { stream: true } : {}));
        expect(result.status, result.text).toBe(200);
        const clientModel = stream
          ? (parseSse(result.text).find((event) => event.event === 'message_start')!.data.message
              .model as string)
          : (JSON.parse(result.text) as { model: string }).model;
        expect(clientModel).toBe(alias);
        // The upstream was asked for the target's model and answered another.
        expect(
          (gateway.simulator.requests().at(-1)!.body as { model?: string }).model ?? `up-${profile}`,
        ).toBe(`up-${profile}`);

        expect(result.attempts).toHaveLength(1);
        const [attempt] = result.attempts as [ReadableSpan];
        expect(attempt.attributes).toMatchObject({
          'gen_ai.request.model': alias,
          'gen_ai.response.model': answered,
          'svc.upstream.model': `up-${profile}`,
          'svc.settlement.outcome': 'completed',
          'svc.streamed': stream,
        });
        expect(attempt.events.map((event) => event.name)).toEqual(stream ? ['gen_ai.first_chunk'] : []);

        const samples = await scrape();
        const series = { gen_ai_request_model: alias, gen_ai_response_model: answered };
        expect(total(samples, 'gen_ai_client_operation_duration_seconds_count', series)).toBe(1);
        expect(
          total(samples, 'gen_ai_client_token_usage_count', { ...series, gen_ai_token_type: 'output' }),
        ).toBe(1);
        expect(
          total(samples, 'gen_ai_client_operation_duration_seconds_count', {
            gen_ai_request_model: alias,
            gen_ai_response_model: '',
          }),
        ).toBe(0);
        expect(
          total(samples, 'gen_ai_client_operation_time_to_first_chunk_seconds_count', {
            gen_ai_request_model: alias,
          }),
        ).toBe(stream ? 1 : 0);
      });
    }
  }

  it('is "" on the series and absent from the span when no answer named one (an error status)', async () => {
    gateway.simulator.setBehaviour({ status: 400 }, { model: 'up-slow' });
    const result = await traced(messageBody('slow'));
    expect(result.status).toBe(400);
    const [attempt] = result.attempts as [ReadableSpan];
    expect(attempt.attributes['gen_ai.response.model']).toBeUndefined();
    expect(attempt.attributes['error.type']).toBe('http_4xx');
    expect(attempt.events).toEqual([]);
    const samples = await scrape();
    expect(
      total(samples, 'gen_ai_client_operation_duration_seconds_count', {
        gen_ai_request_model: 'slow',
        gen_ai_response_model: '',
        error_type: 'http_4xx',
      }),
    ).toBe(1);
  });
});

describe('error classes', () => {
  it('each foreground class is what its failure produces, on the metrics and the attempt span', async () => {
    const cases: Array<{ errorType: string; behaviour?: SimBehaviour; alias?: string; stream?: boolean }> = [
      { errorType: 'http_429', behaviour: { status: 429 } },
      { errorType: 'http_5xx', behaviour: { status: 503 } },
      { errorType: 'timeout', behaviour: { latencyMs: 1500 } },
      { errorType: 'dropped', behaviour: { dropBeforeResponse: true } },
      { errorType: 'dropped', behaviour: { omitFinish: true }, stream: true },
      { errorType: 'connect', alias: 'dead' },
    ];
    for (const { errorType, behaviour, alias, stream } of cases) {
      const before = total(await scrape(), 'svc_upstream_errors_total', { error_type: errorType });
      if (behaviour) gateway.simulator.setBehaviour(behaviour, { model: 'up-slow', times: 1 });
      const result = await traced(messageBody(alias ?? 'slow', stream ? { stream: true } : {}));
      expect(result.attempts, errorType).toHaveLength(1);
      expect(result.attempts[0]!.attributes['error.type'], errorType).toBe(errorType);
      const samples = await scrape();
      expect(total(samples, 'svc_upstream_errors_total', { error_type: errorType }), errorType).toBe(
        before + 1,
      );
    }
    // Every error_type in the scrape is a documented class.
    const samples = await scrape();
    for (const sample of samples.filter((entry) => entry.labels.error_type))
      expect(Object.keys(ERROR_TYPES)).toContain(sample.labels.error_type);
  }, 60_000);

  it('client_gone: a stream the client leaves', async () => {
    const before = total(await scrape(), 'svc_upstream_errors_total', { error_type: 'client_gone' });
    gateway.simulator.setBehaviour({ eventDelayMs: 200, deltas: 10 }, { model: 'up-slow', times: 1 });
    const aborter = new AbortController();
    const answer = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'vendora-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(messageBody('slow', { stream: true })),
      signal: aborter.signal,
    });
    expect(answer.status).toBe(200);
    const reader = answer.body!.getReader();
    await reader.read();
    aborter.abort();
    await reader.read().catch(() => undefined);
    let now = before;
    for (let wait = 0; wait < 100 && now === before; wait++) {
      await new Promise((done) => setTimeout(done, 30));
      now = total(await scrape(), 'svc_upstream_errors_total', { error_type: 'client_gone' });
    }
    expect(now).toBe(before + 1);
  });

  it('every detail the runner and the background jobs settle with maps to its documented class', () => {
    const details: Record<string, keyof typeof ERROR_TYPES> = {
      timeout: 'timeout',
      connect: 'connect',
      dropped: 'dropped',
      stream_incomplete: 'dropped',
      aborted: 'client_gone',
      client_gone: 'client_gone',
      protocol: 'protocol',
      no_cost: 'protocol',
      http_301: 'protocol',
      http_429: 'http_429',
      http_400: 'http_4xx',
      http_404: 'http_4xx',
      http_5xx: 'http_5xx',
      http_503: 'http_5xx',
      local_client: 'local',
      local_gateway: 'local',
      cancelled: 'cancelled',
      cancelled_queued: 'cancelled',
      cancelled_before_submission: 'cancelled',
      cancelled_before_fallback: 'cancelled',
      lease_expired: 'expired',
      expired: 'expired',
      batch_record_expired: 'expired',
      interrupted: 'other',
      unavailable: 'other',
      not_stored: 'other',
      not_created: 'other',
      idempotent_replay: 'other',
    };
    for (const [detail, expected] of Object.entries(details))
      expect(errorClass(detail), detail).toBe(expected);
    // Every class is reachable, and the page lists every class and every outcome.
    expect(new Set(Object.values(details))).toEqual(new Set(Object.keys(ERROR_TYPES)));
    const page = renderObservabilityDoc();
    for (const name of Object.keys(ERROR_TYPES)) expect(page).toContain(`\`${name}\``);
    for (const outcome of SETTLEMENT_OUTCOMES) expect(page).toContain(`\`${outcome}\``);
  });
});

describe('operation and provider names', () => {
  it("count_tokens is messages.count_tokens; providers are the profiles' vendors", async () => {
    const { max_tokens: _unused, ...countBody } = messageBody(`m:${WIRES.messages}`);
    expect((await postCountTokens(gateway.url, key, countBody)).status).toBe(200);
    expect((await postMessages(gateway.url, key, messageBody(`m:${WIRES['chat-completions']}`))).status).toBe(
      200,
    );
    const samples = await scrape();
    expect(
      total(samples, 'svc_reservations_admitted_total', { endpoint: '/v1/messages/count_tokens' }),
    ).toBeGreaterThan(0);
    expect(
      total(samples, 'gen_ai_client_operation_duration_seconds_count', {
        gen_ai_operation_name: 'messages.count_tokens',
        gen_ai_provider_name: 'vendora',
      }),
    ).toBe(1);
    for (const provider of ['vendora', 'vendorb', 'vendore'])
      expect(
        total(samples, 'gen_ai_client_operation_duration_seconds_count', {
          gen_ai_operation_name: 'chat',
          gen_ai_provider_name: provider,
        }),
        provider,
      ).toBeGreaterThan(0);
  });
});
