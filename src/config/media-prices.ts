/**
 * Semantic checks of media alias prices (what the schema cannot say), and the refusal of the old
 * per-connection `resource_prices`, which names the media aliases to write instead.
 */
import type { Config, MediaModelConfig } from './schema.js';

export function mediaPriceProblems(model: MediaModelConfig, at: string): string[] {
  switch (model.endpoint) {
    case 'audio.speech':
    case 'moderations':
    case 'embeddings':
      return [];
    case 'audio.transcriptions':
      return model.targets.flatMap((target, index) => {
        const units = [target.price.per_minute_micros, target.price.per_second_micros];
        return units.filter((unit) => unit !== undefined).length === 1
          ? []
          : [`${at}/targets/${index}/price: set exactly one of per_minute_micros and per_second_micros`];
      });
    case 'images.generations':
      return model.targets.flatMap((target, index) =>
        imagePriceProblems(target.price, `${at}/targets/${index}/price`),
      );
    default: {
      const never: never = model;
      throw new Error(`unknown media alias ${JSON.stringify(never)}`);
    }
  }
}

type ImagePrice = Extract<MediaModelConfig, { endpoint: 'images.generations' }>['targets'][number]['price'];

function imagePriceProblems(price: ImagePrice, at: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  price.per_image.forEach((row, index) => {
    const key = `${row.size}/${row.quality ?? '*'}`;
    if (seen.has(key))
      problems.push(
        `${at}/per_image/${index}: size ${row.size} and quality ${row.quality ?? '(any)'} are priced twice`,
      );
    seen.add(key);
  });
  if (price.default_size !== undefined && !price.per_image.some((row) => row.size === price.default_size)) {
    problems.push(`${at}/default_size: no per_image row prices size ${price.default_size}`);
  }
  if (
    price.default_quality !== undefined &&
    !price.per_image.some((row) => row.quality === undefined || row.quality === price.default_quality)
  ) {
    problems.push(`${at}/default_quality: no per_image row prices quality ${price.default_quality}`);
  }
  return problems;
}

/**
 * `resource_prices` priced every model of a connection alike; prices now belong to the model. The
 * message gives the YAML to write: one media alias per priced endpoint, on that connection.
 */
export function legacyResourcePriceProblems(config: Config): string[] {
  return config.connections.flatMap((connection, index) => {
    const old = connection.resource_prices;
    if (old === undefined) return [];
    const target = (price: string) =>
      `{ connection: ${connection.name}, model: <upstream model id>, price: ${price} }`;
    const aliases: string[] = [];
    const alias = (endpoint: string, price: string) =>
      aliases.push(`{ alias: <name>, endpoint: ${endpoint}, targets: [${target(price)}] }`);
    if (old.speech_per_million_characters_micros !== undefined)
      alias('audio.speech', `{ per_million_characters_micros: ${old.speech_per_million_characters_micros} }`);
    if (old.transcription_per_minute_micros !== undefined)
      alias(
        'audio.transcriptions',
        `{ per_minute_micros: ${old.transcription_per_minute_micros}, max_seconds: ${old.transcription_max_seconds} }`,
      );
    if (old.image_micros !== undefined)
      alias('images.generations', `{ per_image: [{ size: 1024x1024, micros: ${old.image_micros} }] }`);
    if (old.moderation_request_micros !== undefined)
      alias('moderations', `{ per_request_micros: ${old.moderation_request_micros} }`);
    const instead = aliases.length > 0 ? ` Write under models: ${aliases.join('; ')}` : '';
    return [
      `/connections/${index}/resource_prices: per-connection prices are no longer accepted: prices belong to each upstream model, so two models on one connection can cost differently. Remove resource_prices and add one media alias per endpoint.${instead}`,
    ];
  });
}
