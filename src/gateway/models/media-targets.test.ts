import { describe, expect, it } from 'vitest';
import type { Config } from '../../config/schema.js';
import { resolveMediaTarget } from './media-targets.js';

const config = {
  models: [
    { alias: 'chat', targets: [{ connection: 'a', model: 'm', price: {} }] },
    {
      alias: 'voice',
      endpoint: 'audio.speech',
      targets: [
        { connection: 'a', model: 'tts-std', price: { per_million_characters_micros: 15 } },
        { connection: 'b', model: 'tts-hd', price: { per_million_characters_micros: 30 } },
      ],
    },
  ],
} as unknown as Config;

describe('media targets', () => {
  it('serves the alias with its first target, or its target on the Svc-Route connection', () => {
    expect(resolveMediaTarget(config, 'audio.speech', 'voice', {})).toEqual({
      alias: 'voice',
      connection: 'a',
      upstreamModel: 'tts-std',
      price: { per_million_characters_micros: 15 },
    });
    expect(resolveMediaTarget(config, 'audio.speech', 'voice', { 'svc-route': 'b' }).upstreamModel).toBe(
      'tts-hd',
    );
  });

  it('names what to send instead', () => {
    expect(() => resolveMediaTarget(config, 'audio.speech', undefined, {})).toThrow(
      'model: a model alias is required (aliases serving audio.speech: voice).',
    );
    expect(() => resolveMediaTarget(config, 'audio.speech', 'tts-1', {})).toThrow(
      /tts-1 is not a configured model alias \(aliases serving audio\.speech: voice\)/,
    );
    expect(() => resolveMediaTarget(config, 'audio.speech', 'chat', {})).toThrow(
      'model: chat serves messages, not audio.speech (aliases serving audio.speech: voice).',
    );
    expect(() => resolveMediaTarget(config, 'moderations', 'voice', {})).toThrow(
      /no alias serves moderations/,
    );
    expect(() => resolveMediaTarget(config, 'audio.speech', 'voice', { 'svc-route': 'c' })).toThrow(
      'Svc-Route: alias voice has no target on connection "c" (its connections: a, b).',
    );
    expect(() => resolveMediaTarget(config, 'audio.speech', 'voice', { 'svc-route': ['a', 'b'] })).toThrow(
      'Svc-Route: send the header once.',
    );
  });
});
