import { describe, expect, it } from 'vitest';
import { checkChatBatchBody, withUpstreamModel } from './batch-line.js';

const IMAGE = 'data:image/png;base64,iVBORw0KGgo=';

describe('chat-completions batch lines', () => {
  it('gives the facts the reservation is priced from', () => {
    const body = {
      model: 'cheap',
      max_completion_tokens: 100,
      n: 2,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: IMAGE } },
          ],
        },
      ],
    };
    expect(checkChatBatchBody(body)).toEqual({
      model: 'cheap',
      maxOutputTokens: 200,
      bodyBytes: Buffer.byteLength(JSON.stringify(body)),
      embeddedDataBytes: IMAGE.length,
      images: 1,
      documents: 0,
    });
    expect(
      checkChatBatchBody({ model: 'm', max_tokens: 7, messages: [{ role: 'user', content: 'hi' }] })
        .maxOutputTokens,
    ).toBe(7);
    expect(withUpstreamModel(body, 'up-cheap')).toMatchObject({ model: 'up-cheap', n: 2 });
  });

  it('refuses what cannot be priced or carried, naming the field', () => {
    const ok = { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] };
    expect(() => checkChatBatchBody({ ...ok, max_tokens: undefined })).toThrow(
      /body\.max_completion_tokens: a positive integer/,
    );
    expect(() => checkChatBatchBody({ ...ok, stream: true })).toThrow(
      'body.stream: batch requests cannot stream',
    );
    expect(() => checkChatBatchBody({ ...ok, model: '' })).toThrow(/body\.model/);
    expect(() => checkChatBatchBody({ ...ok, messages: [{ role: 'robot', content: 'x' }] })).toThrow(
      /body\.messages\[0\]\.role/,
    );
    expect(() =>
      checkChatBatchBody({
        ...ok,
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }],
      }),
    ).toThrow(/audio input/);
    expect(() => checkChatBatchBody({ ...ok, n: 0 })).toThrow(/body\.n/);
  });
});
