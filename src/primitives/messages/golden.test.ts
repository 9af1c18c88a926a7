/** Golden fixtures: upstream wire input in __fixtures__ beside the expected translation (reviewed by hand). */
import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../canonical/types.js';
import { goldenFixtures, runTranslator } from '../shared/golden-fixtures.js';
import {
  buildMessagesRequest,
  DEFAULT_MESSAGES_OPTIONS,
  mapMessagesError,
  parseMessagesResponse,
} from './index.js';
import { createMessagesStreamTranslator } from './stream.js';

const { context: FIXTURE_CONTEXT, json: fixtureJson, events: fixtureEvents } = goldenFixtures('messages');

/** The translated frames of a fixture stream, its usage and whether it ended cleanly. */
async function translateFixtureStream(name: string) {
  const outcome = runTranslator(createMessagesStreamTranslator(FIXTURE_CONTEXT), await fixtureEvents(name));
  return { frames: outcome.frames, usage: outcome.translator.usage() ?? null, complete: outcome.complete };
}

describe('messages primitive golden fixtures', () => {
  it('request-full: only the model changes', () => {
    const input = fixtureJson('request-full.input.json') as MessagesRequest;
    const wire = buildMessagesRequest(input, FIXTURE_CONTEXT, DEFAULT_MESSAGES_OPTIONS);
    expect(wire).toEqual(fixtureJson('request-full.expected.json'));
    expect(input.model).toBe('claude-alias-fast');
  });

  it.each(['response-text', 'response-tool-use'])('%s', (name) => {
    expect(parseMessagesResponse(fixtureJson(`${name}.json`), FIXTURE_CONTEXT)).toEqual(
      fixtureJson(`${name}.expected.json`),
    );
  });

  it('error-overloaded', () => {
    expect(mapMessagesError(529, fixtureJson('error-overloaded.json'), { 'retry-after': '3' })).toEqual(
      fixtureJson('error-overloaded.expected.json'),
    );
  });

  it.each(['stream-text', 'stream-tool-use', 'stream-truncated', 'stream-error'])('%s', async (name) => {
    expect(await translateFixtureStream(`${name}.sse`)).toEqual(fixtureJson(`${name}.expected.json`));
  });
});
