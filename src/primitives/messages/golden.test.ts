/** Golden fixtures: upstream wire input in __fixtures__ beside the expected translation (reviewed by hand). */
import { describe, expect, it } from 'vitest';
import type { MessagesRequest } from '../../canonical/types.js';
import { FIXTURE_CONTEXT, fixtureJson, translateFixtureStream } from './fixtures.js';
import {
  buildMessagesRequest,
  DEFAULT_MESSAGES_OPTIONS,
  mapMessagesError,
  parseMessagesResponse,
} from './index.js';

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
