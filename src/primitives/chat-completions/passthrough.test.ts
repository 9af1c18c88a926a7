import { describe, expect, it } from 'vitest';
import { passthroughChatRequest } from './passthrough.js';

const body = { model: 'alias', messages: [{ role: 'user', content: 'Hi' }], seed: 3, user: 'u' };

describe("the client's chat body for a chat-wire target", () => {
  it('replaces only the model when the client gave a bound and does not stream', () => {
    const wire = passthroughChatRequest(
      { body: { ...body, max_tokens: 9 }, maxTokens: 9, hasTokenBound: true },
      'up-model',
      { tokenField: 'max_tokens' },
    );
    expect(wire).toEqual({ path: '/chat/completions', body: { ...body, max_tokens: 9, model: 'up-model' } });
  });

  it("moves a bound given only under the other token field to the profile's", () => {
    const wire = passthroughChatRequest(
      { body: { ...body, max_tokens: 9 }, maxTokens: 9, hasTokenBound: true },
      'up',
      {
        tokenField: 'max_completion_tokens',
      },
    );
    expect(wire.body).toEqual({ ...body, model: 'up', max_completion_tokens: 9 });
  });

  it("adds the alias default under the profile's token field when the client gave none", () => {
    const wire = passthroughChatRequest({ body, maxTokens: 333, hasTokenBound: false }, 'up', {
      tokenField: 'max_completion_tokens',
    });
    expect(wire.body).toEqual({ ...body, model: 'up', max_completion_tokens: 333 });
  });

  it('asks a stream for the usage chunk, keeping other stream options', () => {
    const streamed = { ...body, stream: true, max_tokens: 5, stream_options: { include_obfuscation: false } };
    const wire = passthroughChatRequest({ body: streamed, maxTokens: 5, hasTokenBound: true }, 'up', {
      tokenField: 'max_tokens',
    });
    expect(wire.body).toEqual({
      ...streamed,
      model: 'up',
      stream_options: { include_obfuscation: false, include_usage: true },
    });
  });
});
