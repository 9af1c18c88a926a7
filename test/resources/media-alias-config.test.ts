/** Start-up checks of media aliases (issue 15): per-model prices by endpoint, and the old per-connection prices refused. */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { legacyResourcePriceProblems } from '../../src/config/media-prices.js';
import type { Config } from '../../src/config/schema.js';
import { baseConfig } from '../support/gateway.js';

const ENV = { SIM_UPSTREAM_KEY: 'sk' };
const CONNECTIONS = [
  {
    name: 'sim-chat',
    profile: 'vendorb.chat-embeddings.v1',
    base_url: 'http://127.0.0.1:1/v1',
    auth: { scheme: 'none' },
  },
  {
    name: 'sim-vendora',
    profile: 'vendora.messages.2023-06-01',
    base_url: 'http://127.0.0.1:1',
    auth: { scheme: 'none' },
  },
];
const TOKENS = { input_per_mtok_micros: 1, output_per_mtok_micros: 2 };

function config(models: unknown[], connections: unknown[] = CONNECTIONS) {
  return parseConfig({ ...baseConfig(), connections, models }, 'test.yaml', ENV);
}

const speech = (price: unknown, connection = 'sim-chat') => ({
  alias: 'voice',
  endpoint: 'audio.speech',
  targets: [{ connection, model: 'up-tts-hd', price }],
});

describe('media aliases', () => {
  it('accepts an alias per media endpoint beside the messages aliases, with defaults filled in', () => {
    const parsed = config([
      { alias: 'chat', targets: [{ connection: 'sim-vendora', model: 'up-m', price: TOKENS }] },
      speech({ per_million_characters_micros: 30_000_000 }),
      {
        alias: 'ears',
        endpoint: 'audio.transcriptions',
        targets: [{ connection: 'sim-chat', model: 'up-whisper', price: { per_second_micros: 100 } }],
      },
      {
        alias: 'painter',
        endpoint: 'images.generations',
        targets: [
          {
            connection: 'sim-chat',
            model: 'up-img',
            price: {
              per_image: [
                { size: '1024x1024', quality: 'standard', micros: 40_000 },
                { size: '1024x1024', quality: 'hd', micros: 80_000 },
              ],
              default_size: '1024x1024',
            },
          },
        ],
      },
      {
        alias: 'guard',
        endpoint: 'moderations',
        targets: [{ connection: 'sim-chat', model: 'up-mod', price: { per_request_micros: 100 } }],
      },
    ]);
    expect(parsed.models.map((model) => model.endpoint ?? 'messages')).toEqual([
      'messages',
      'audio.speech',
      'audio.transcriptions',
      'images.generations',
      'moderations',
    ]);
    expect(parsed.models[0]!.targets[0]!.price).toMatchObject({
      cache_read_per_mtok_micros: 0,
      request_fee_micros: 0,
    });
    expect(parsed.models[2]!.targets[0]!.price).toEqual({ per_second_micros: 100, max_seconds: 3600 });
  });

  it('reports a mistake on the entry and field it is in, by the endpoint named', () => {
    expect(() => config([speech({ per_million_characters_micros: 1, per_image: 3 })])).toThrow(
      /\/models\/0\/targets\/0\/price: unknown field "per_image"/,
    );
    expect(() => config([speech({ input_per_mtok_micros: 1 })])).toThrow(
      /\/models\/0\/targets\/0\/price: must have required property 'per_million_characters_micros'/,
    );
    expect(() => config([{ ...speech({}), endpoint: 'audio.music' }])).toThrow(
      /\/models\/0\/endpoint: unknown endpoint "audio\.music" \(one of messages, audio\.speech/,
    );
    expect(() =>
      config([{ alias: 'chat', targets: [{ connection: 'sim-vendora', model: 'm', price: {} }] }]),
    ).toThrow(/\/models\/0\/targets\/0\/price: must have required property 'input_per_mtok_micros'/);
  });

  it('refuses a target whose connection cannot serve the endpoint, and duplicate aliases', () => {
    expect(() => config([speech({ per_million_characters_micros: 1 }, 'sim-vendora')])).toThrow(
      /\/models\/0\/targets\/0\/connection: connection "sim-vendora" \(profile vendora\.messages\.2023-06-01\) does not serve audio\.speech/,
    );
    expect(() =>
      config([
        speech({ per_million_characters_micros: 1 }),
        { alias: 'voice', targets: [{ connection: 'sim-vendora', model: 'm', price: TOKENS }] },
      ]),
    ).toThrow(/duplicate alias "voice"/);
  });

  it('checks transcription units and image rows', () => {
    const ears = (price: unknown) => ({
      alias: 'ears',
      endpoint: 'audio.transcriptions',
      targets: [{ connection: 'sim-chat', model: 'w', price }],
    });
    expect(() => config([ears({})])).toThrow(/set exactly one of per_minute_micros and per_second_micros/);
    expect(() => config([ears({ per_minute_micros: 1, per_second_micros: 1 })])).toThrow(/exactly one/);
    const painter = (price: unknown) => ({
      alias: 'painter',
      endpoint: 'images.generations',
      targets: [{ connection: 'sim-chat', model: 'i', price }],
    });
    expect(() =>
      config([
        painter({
          per_image: [
            { size: '1024x1024', micros: 1 },
            { size: '1024x1024', micros: 2 },
          ],
        }),
      ]),
    ).toThrow(/per_image\/1: size 1024x1024 and quality \(any\) are priced twice/);
    expect(() =>
      config([painter({ per_image: [{ size: '1024x1024', micros: 1 }], default_size: '512x512' })]),
    ).toThrow(/default_size: no per_image row prices size 512x512/);
    expect(() =>
      config([
        painter({
          per_image: [{ size: '1024x1024', quality: 'hd', micros: 1 }],
          default_quality: 'standard',
        }),
      ]),
    ).toThrow(/default_quality: no per_image row prices quality standard/);
  });

  it('names the media aliases to write instead of per-connection resource_prices', () => {
    const connections = [
      {
        ...CONNECTIONS[0],
        resource_prices: {
          speech_per_million_characters_micros: 15_000_000,
          transcription_per_minute_micros: 6_000,
          transcription_max_seconds: 600,
          image_micros: 40_000,
          moderation_request_micros: 100,
        },
      },
    ];
    expect(() => config([], connections)).toThrow(
      /test\.yaml: \/connections\/0\/resource_prices: per-connection prices are no longer accepted/,
    );
    const parsed = { connections } as unknown as Config;
    const [problem, ...rest] = legacyResourcePriceProblems(parsed);
    expect(rest).toEqual([]);
    expect(problem).toMatch(
      /^\/connections\/0\/resource_prices: per-connection prices are no longer accepted/,
    );
    expect(problem).toContain(
      '{ alias: <name>, endpoint: audio.speech, targets: [{ connection: sim-chat, model: <upstream model id>, price: { per_million_characters_micros: 15000000 } }] }',
    );
    expect(problem).toContain('price: { per_minute_micros: 6000, max_seconds: 600 }');
    expect(problem).toContain('price: { per_image: [{ size: 1024x1024, micros: 40000 }] }');
    expect(problem).toContain('price: { per_request_micros: 100 }');
  });
});
