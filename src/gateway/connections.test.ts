import aws4 from 'aws4';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../config/load.js';
import { buildUpstreams, type Upstreams } from './connections.js';

const ENVIRONMENT = {
  AKID: 'AKIDEXAMPLE',
  SECRET: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  TOKEN: 'session-token',
  KEY: 'upstream-secret',
};

function upstreams(auth: Record<string, unknown>, profile = 'cloudf.mantle.vendora.messages.v1'): Upstreams {
  const config = parseConfig(
    {
      projects: [
        {
          id: 'prj_a',
          runs: {
            default_budget_micros_usd: 1,
            max_budget_micros_usd: 1,
            default_ttl_seconds: 1,
            max_ttl_seconds: 1,
          },
          rate_limit: { requests_per_second: 1, burst: 1 },
        },
      ],
      connections: [{ name: 'up', profile, base_url: 'https://mantle.us-east-1.example/vendora', auth }],
    },
    'test',
    ENVIRONMENT,
  );
  return buildUpstreams(config, ENVIRONMENT);
}

describe('connection auth schemes', () => {
  let built: Upstreams | undefined;
  afterEach(async () => {
    await built?.close();
  });

  it('signs with SigV4 (service, region, session token) so the signature verifies', () => {
    built = upstreams({
      scheme: 'sigv4',
      service: 'bedrock-mantle',
      region: 'us-east-1',
      access_key_id_env: 'AKID',
      secret_access_key_env: 'SECRET',
      session_token_env: 'TOKEN',
    });
    const connection = built.connections.get('up')!;
    expect(connection.basePath).toBe('/vendora');
    const body = '{"model":"m","max_tokens":1,"messages":[]}';
    const headers = connection.authHeaders('POST', '/vendora/v1/messages', body, {
      'content-type': 'application/json',
    });
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-east-1\/bedrock-mantle\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
    );
    expect(headers['x-amz-security-token']).toBe('session-token');
    const expected = aws4.sign(
      {
        host: 'mantle.us-east-1.example',
        path: '/vendora/v1/messages',
        method: 'POST',
        service: 'bedrock-mantle',
        region: 'us-east-1',
        body,
        headers: { 'content-type': 'application/json', 'X-Amz-Date': headers['x-amz-date']! },
      },
      { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: ENVIRONMENT.SECRET, sessionToken: 'session-token' },
    );
    expect(headers.authorization).toBe(expected.headers?.Authorization);
    const tampered = connection.authHeaders('POST', '/vendora/v1/messages', `${body} `, {
      'content-type': 'application/json',
    });
    expect(tampered.authorization).not.toBe(headers.authorization);
  });

  it('sends keys in the header each scheme names, from the environment', () => {
    built = upstreams({ scheme: 'x-api-key', secret_env: 'KEY' }, 'vendora.messages.2023-06-01');
    expect(built.connections.get('up')!.authHeaders('POST', '/v1/messages', '{}', {})).toEqual({
      'x-api-key': 'upstream-secret',
    });
  });

  it('sends a bearer token or a named header', async () => {
    built = upstreams({ scheme: 'bearer', secret_env: 'KEY' }, 'vendorb.chat-embeddings.v1');
    expect(built.connections.get('up')!.authHeaders('POST', '/x', '{}', {})).toEqual({
      authorization: 'Bearer upstream-secret',
    });
    await built.close();
    built = upstreams(
      { scheme: 'header', header: 'X-Goog-Api-Key', secret_env: 'KEY' },
      'vendore.generate-content.text.v1beta',
    );
    expect(built.connections.get('up')!.authHeaders('POST', '/x', '{}', {})).toEqual({
      'x-goog-api-key': 'upstream-secret',
    });
  });
});
