/**
 * Golden fixtures (__fixtures__/): canonical request -> wire request, wire response -> canonical
 * message, wire chunk sequence -> canonical event sequence. Expected files are reviewed like code;
 * after a deliberate change regenerate them with `UPDATE_FIXTURES=1 npx vitest run <this file>`.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../canonical/types.js';
import type { TranslateContext } from '../shared/types.js';
import type { ChatOptions } from './options.js';
import { buildChatRequest } from './request.js';
import { parseChatResponse } from './response.js';
import { createChatStreamTranslator } from './stream.js';

const FIXTURES = join(import.meta.dirname, '__fixtures__');
const UPDATE = process.env.UPDATE_FIXTURES === '1';

const FIXTURE_CONTEXT: TranslateContext = {
  upstreamModel: 'gpt-test-1',
  responseModel: 'alias-chat',
  messageId: 'msg_01FIXTURE',
};

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function cases(folder: string, inputSuffix: string): string[] {
  return readdirSync(join(FIXTURES, folder))
    .filter((file) => file.endsWith(inputSuffix))
    .map((file) => file.slice(0, -inputSuffix.length))
    .sort();
}

function expectGolden(path: string, actual: unknown): void {
  if (UPDATE || !existsSync(path)) writeFileSync(path, `${JSON.stringify(actual, null, 2)}\n`);
  expect(actual).toEqual(readJson(path));
}

describe('request fixtures', () => {
  const optionsByCase = readJson(join(FIXTURES, 'request', 'options.json')) as Record<string, ChatOptions>;
  it.each(cases('request', '.input.json'))('%s', (name) => {
    const input = readJson(join(FIXTURES, 'request', `${name}.input.json`)) as MessagesRequest;
    const options = optionsByCase[name] ?? optionsByCase.default;
    if (options === undefined) throw new Error('request/options.json needs a default');
    expectGolden(
      join(FIXTURES, 'request', `${name}.expected.json`),
      buildChatRequest(input, FIXTURE_CONTEXT, options),
    );
  });
});

describe('response fixtures', () => {
  it.each(cases('response', '.wire.json'))('%s', (name) => {
    const wire = readJson(join(FIXTURES, 'response', `${name}.wire.json`));
    expectGolden(
      join(FIXTURES, 'response', `${name}.expected.json`),
      parseChatResponse(wire, FIXTURE_CONTEXT),
    );
  });
});

describe('stream fixtures', () => {
  it.each(cases('stream', '.chunks.json'))('%s', (name) => {
    const chunks = readJson(join(FIXTURES, 'stream', `${name}.chunks.json`)) as unknown[];
    const frames = chunks.map((chunk) => (chunk === '[DONE]' ? chunk : JSON.stringify(chunk)));
    const translator = createChatStreamTranslator(FIXTURE_CONTEXT, { tokenField: 'max_completion_tokens' });
    const events = frames.flatMap((data) => translator.push({ data }));
    const end = translator.end();
    const actual = {
      events: [...events, ...end.frames].map((clientFrame) => JSON.parse(clientFrame.data) as unknown),
      complete: end.complete,
      usage: translator.usage() ?? null,
    };
    expectGolden(join(FIXTURES, 'stream', `${name}.expected.json`), actual);
  });
});
