import { describe, expect, it } from 'vitest';
import { BLOCK_VALIDATORS, TOOL_VALIDATORS, TOP_LEVEL_VALIDATORS } from './message-schemas.js';

// The validators compile on first use: this compiles every one, so a schema Ajv refuses fails here
// rather than on the first request that needs it.
describe('message schemas', () => {
  const tables = {
    'blocks, portable': BLOCK_VALIDATORS.portable,
    'blocks, native': BLOCK_VALIDATORS.native,
    'tools, portable': TOOL_VALIDATORS.portable,
    'tools, native': TOOL_VALIDATORS.native,
    'top level': TOP_LEVEL_VALIDATORS,
  };
  for (const [name, table] of Object.entries(tables)) {
    it(`every validator compiles (${name})`, () => {
      const keys = Object.keys(table);
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        const validate = (table as Record<string, unknown>)[key];
        expect(typeof validate, key).toBe('function');
        // Read again: the compiled function replaced the getter.
        expect((table as Record<string, unknown>)[key], key).toBe(validate);
      }
    });
  }
});
