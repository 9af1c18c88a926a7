/**
 * Keeps the README's quick start true: the shipped config/quickstart.yaml (ports and data folder
 * moved aside) starts with no credentials, and both official SDKs work against it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { parseConfig } from '../src/config/load.js';
import { type RunningGateway, startGateway } from '../src/gateway-server.js';
import { createLogger } from '../src/lib/logger.js';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('quick start configuration', () => {
  let gateway: RunningGateway;
  let folder: string;
  let key: string;

  beforeAll(async () => {
    folder = mkdtempSync(join(tmpdir(), 'svc-quickstart-'));
    const simulatorPort = await freePort();
    const text = readFileSync('config/quickstart.yaml', 'utf8')
      .replaceAll('9100', String(simulatorPort))
      .replaceAll('data/', `${folder}/`);
    const raw = parseDocument(text).toJS() as Record<string, any>;
    raw.listen.port = 0;
    raw.logging = { level: 'silent' };
    const config = parseConfig(raw, 'quickstart.yaml', {});
    gateway = await startGateway({ config, environment: {}, logger: createLogger('silent') });
    key = readFileSync(join(folder, 'quickstart-key.txt'), 'utf8').trim();
  });

  afterAll(async () => {
    await gateway?.close();
    rmSync(folder, { recursive: true, force: true });
  });

  it('serves the demo alias to the vendora SDK, streaming and not', async () => {
    const client = new Anthropic({
      baseURL: gateway.url,
      apiKey: key,
      defaultHeaders: { 'vendora-version': '2023-06-01' },
    });
    const message = await client.messages.create({
      model: 'demo',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect(message.content[0]).toMatchObject({ type: 'text' });
    expect(message.model).toBe('demo');
    const streamed = await client.messages
      .stream({ model: 'demo', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] })
      .finalMessage();
    expect(streamed.stop_reason).toBe('end_turn');
  });

  it('serves governance and the experimental endpoints to the vendorb SDK', async () => {
    const unit = await fetch(`${gateway.url}/svc/v1/work-units`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'idempotency-key': 'qs-1',
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(unit.status).toBe(201);
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key });
    const moderation = await client.moderations.create({ model: 'demo-moderation', input: 'hello' });
    expect(moderation.results).toHaveLength(1);
    const embedding = await client.embeddings.create({ model: 'demo-embed', input: 'hello' });
    expect(embedding.data[0]!.embedding).toHaveLength(1536);
    // Files and batches with nothing but the base URL and the key (no Idempotency-Key, no Svc-Route).
    const line = {
      custom_id: 'q',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'demo', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 },
    };
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${JSON.stringify(line)}\n`), 'in.jsonl'),
      purpose: 'batch',
    });
    const batch = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect((await client.files.list()).data.map((each) => each.id)).toContain(file.id);
    expect((await client.batches.list()).data.map((each) => each.id)).toEqual([batch.id]);
    const response = await client.responses.create({ model: 'demo', input: 'hello', max_output_tokens: 64 });
    expect(response.status).toBe('completed');
    const background = await client.responses.create({ model: 'demo', input: 'hello', background: true });
    expect(['queued', 'in_progress', 'completed']).toContain(background.status);
  });

  it('answers malformed input on every POST endpoint with a 4xx in its dialect, never a 5xx', async () => {
    const bodies = [
      'null',
      '[]',
      '"x"',
      '{',
      '{"model":null}',
      '{"__proto__":{"x":1}}',
      '{"model":"demo","max_tokens":"a","messages":[]}',
      '{"model":"demo","max_tokens":10,"messages":[{"role":"user","content":[null]}]}',
      '{"model":"demo","max_tokens":10,"messages":[{"role":"user","content":"x"}],"tools":[{}]}',
      '{"work_unit_id":[],"budget_micros_usd":{}}',
      '{"definition_id":1,"value":[],"observed_at":5}',
      '{"input_file_id":5,"endpoint":"/v1/messages","completion_window":"24h"}',
      '{"model":"demo","input":[{"type":"bogus"}]}',
    ];
    const paths = [
      '/v1/messages',
      '/v1/messages/count_tokens',
      '/svc/v1/work-units',
      '/svc/v1/runs',
      '/svc/v1/work-units/wku_x/outcomes',
      '/svc/v1/runs/run_x/close',
      '/v1/batches',
      '/v1/responses',
      '/v1/chat/completions',
      '/v1/moderations',
      '/v1/embeddings',
      '/v1/images/generations',
      '/v1/audio/speech',
      '/v1/files',
      '/v1/audio/transcriptions',
    ];
    const failures: string[] = [];
    let count = 0;
    for (const path of paths) {
      for (const body of bodies) {
        for (const contentType of ['application/json', 'text/plain', 'multipart/form-data; boundary=x']) {
          count++;
          const response = await fetch(`${gateway.url}${path}`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'vendora-version': '2023-06-01',
              'content-type': contentType,
              'idempotency-key': `fuzz-${count}`,
            },
            body,
          });
          await response.text();
          if (response.status >= 500 || !response.headers.get('request-id'))
            failures.push(`${response.status} ${path} ${contentType} ${body}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
