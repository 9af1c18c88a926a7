import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { ConfigError, parseConfig } from '../src/config/load.js';

const KEY = `gw_${'A'.repeat(40)}`;
const ENVIRONMENT = {
  SVC_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/svc',
  SVC_SEALING_KEY: 'ab'.repeat(32),
  SVC_SUPPORT_KEY: KEY,
  SVC_ALERTS_WEBHOOK_SECRET: `whsec_${'W'.repeat(43)}`,
  VENDORA_API_KEY: 'x',
  VENDORB_API_KEY: 'x',
  CLOUDF_ACCESS_KEY_ID: 'x',
  CLOUDF_SECRET_ACCESS_KEY: 'x',
  CLOUDF_SESSION_TOKEN: 'x',
  VENDORE_API_KEY: 'x',
};

function exampleFromDocs(): unknown {
  const text = readFileSync('docs/configuration.md', 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('no yaml example in docs/configuration.md');
  return parseDocument(block).toJS();
}

describe('docs/configuration.md', () => {
  it('holds a complete example that the gateway accepts', () => {
    const config = parseConfig(exampleFromDocs(), 'docs example', ENVIRONMENT);
    expect(config.connections.map((connection) => connection.name)).toContain('mantle-vendora');
    expect(config.models[0]?.targets).toHaveLength(3);
  });

  it('names the file, the path and the problem when the example is broken', () => {
    const broken = exampleFromDocs() as { projects: Array<{ runs: Record<string, number> }> };
    broken.projects[0]!.runs.default_ttl_seconds = 10 ** 7;
    expect(() => parseConfig(broken, 'docs example', ENVIRONMENT)).toThrow(ConfigError);
    expect(() => parseConfig(broken, 'docs example', ENVIRONMENT)).toThrow(
      /docs example: \/projects\/0\/runs\/default_ttl_seconds/,
    );
    expect(() => parseConfig(exampleFromDocs(), 'docs example', {})).toThrow(/SVC_SUPPORT_KEY is not set/);
  });
});
