/**
 * Golden fixtures (__fixtures__/): canonical request -> wire request, wire response -> canonical
 * message, wire chunk sequence -> canonical event sequence. Expected files are reviewed like code;
 * after a deliberate change regenerate them with `UPDATE_FIXTURES=1 npx vitest run <this file>`.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../canonical/types.js';
import { goldenFixtures, runTranslator } from '../shared/golden-fixtures.js';
import type { ChatOptions } from './options.js';
import { buildChatRequest } from './request.js';
import { parseChatResponse } from './response.js';
import { createChatStreamTranslator } from './stream.js';

const { context: FIXTURE_CONTEXT, json: readJson, directory: FIXTURES } = goldenFixtures('chat-completions');
const UPDATE = process.env.UPDATE_FIXTURES === '1';

function cases(folder: string, inputSuffix: string): string[] {
  return readdirSync(new URL(`${folder}/`, FIXTURES))
    .filter((file) => file.endsWith(inputSuffix))
    .map((file) => file.slice(0, -inputSuffix.length))
    .sort();
}

/** `name` is relative to __fixtures__/. */
function expectGolden(name: string, actual: unknown): void {
  const path = new URL(name, FIXTURES);
  if (UPDATE || !existsSync(path)) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
  expect(actual).toEqual(readJson(name));
}

describe('request fixtures', () => {
  const optionsByCase = readJson(`request/options.json`) as Record<string, ChatOptions>;
  it.each(cases('request', '.input.json'))('%s', (name) => {
    const input = readJson(`request/${name}.input.json`) as MessagesRequest;
    const options = optionsByCase[name] ?? optionsByCase.default;
    if (options === undefined) throw new Error('request/options.json needs a default');
    expectGolden(`request/${name}.expected.json`, buildChatRequest(input, FIXTURE_CONTEXT, options));
  });
});

describe('response fixtures', () => {
  it.each(cases('response', '.wire.json'))('%s', (name) => {
    const wire = readJson(`response/${name}.wire.json`);
    expectGolden(`response/${name}.expected.json`, parseChatResponse(wire, FIXTURE_CONTEXT));
  });
});

describe('stream fixtures', () => {
  it.each(cases('stream', '.chunks.json'))('%s', (name) => {
    const chunks = readJson(`stream/${name}.chunks.json`) as unknown[];
    const frames = chunks.map((chunk) => (chunk === '[DONE]' ? chunk : JSON.stringify(chunk)));
    const translator = createChatStreamTranslator(FIXTURE_CONTEXT, { tokenField: 'max_completion_tokens' });
    const outcome = runTranslator(
      translator,
      frames.map((data) => ({ data })),
    );
    const actual = {
      events: outcome.frames.map((clientFrame) => JSON.parse(clientFrame.data) as unknown),
      complete: outcome.complete,
      usage: translator.usage() ?? null,
    };
    expectGolden(`stream/${name}.expected.json`, actual);
  });
});
