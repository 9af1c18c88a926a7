/**
 * The two depth checks of JSON bodies (body.ts): the scan of the text, used for large bodies, and
 * the walk of the parsed value, used for small ones, must refuse exactly the same bodies.
 */
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan, valueNestsDeeperThan } from './body.js';

/** Nesting `depth` deep, alternating objects and arrays, with strings holding brackets on the way. */
function nested(depth: number, wrap: (inner: string, level: number) => string): string {
  let text = '"[{ not nesting }]"';
  for (let level = depth; level > 0; level--) text = wrap(text, level);
  return text;
}

const shapes: Record<string, (inner: string, level: number) => string> = {
  arrays: (inner) => `[${inner}]`,
  objects: (inner, level) => `{"k${level}":${inner},"s":"}]\\\\\\""}`,
  mixed: (inner, level) => (level % 2 ? `[1,${inner},"]"]` : `{"a":null,"b":${inner}}`),
};

describe('JSON body depth', () => {
  for (const [name, wrap] of Object.entries(shapes)) {
    it(`${name}: the text scan and the parsed walk agree at and around the limit`, () => {
      for (const depth of [0, 1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500]) {
        const text = nested(depth, wrap);
        const expected = depth > MAX_JSON_DEPTH;
        expect(nestsDeeperThan(text, MAX_JSON_DEPTH), `${name} ${depth} scan`).toBe(expected);
        expect(valueNestsDeeperThan(JSON.parse(text), MAX_JSON_DEPTH), `${name} ${depth} walk`).toBe(
          expected,
        );
      }
    });
  }

  it('counts a deep branch beside shallow ones, and empty containers as a level', () => {
    const deepLast = `[[1],[2],${nested(MAX_JSON_DEPTH, (inner) => `[${inner}]`)}]`;
    expect(valueNestsDeeperThan(JSON.parse(deepLast), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(deepLast, MAX_JSON_DEPTH)).toBe(true);
    expect(valueNestsDeeperThan(JSON.parse('{"a":{}}'), 1)).toBe(true);
    expect(valueNestsDeeperThan(JSON.parse('{"a":{}}'), 2)).toBe(false);
    expect(valueNestsDeeperThan('text', 0)).toBe(false);
  });
});
