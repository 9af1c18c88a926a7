/**
 * The HTTP side of a delivery (undici). One agent for every endpoint: its connector resolves the
 * host at connection time, checks the address against the URL rules (url-policy.ts: a host whose
 * DNS answer turned internal is refused) and connects to exactly that checked address, keeping the
 * host name for TLS (SNI, certificate) and the Host header. Every request is bounded by
 * webhooks.timeout_ms as a whole (connect, send, headers and body); the answer's body is read and
 * discarded up to RESPONSE_BYTES.
 */
import { isIP } from 'node:net';
import { Agent, buildConnector, request } from 'undici';
import { AddressRefusedError, resolvePublicAddress } from './url-policy.js';

/** The most of a receiver's answer that is read (then the connection is dropped). */
const RESPONSE_BYTES = 64 * 1024;

export type DeliveryResult =
  | { kind: 'answered'; status: number; latencyMs: number }
  | { kind: 'timeout' | 'network_error' | 'refused_address'; error: string; latencyMs: number };

export interface DeliveryClientSettings {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
}

export class DeliveryClient {
  private readonly agent: Agent;

  constructor(private readonly settings: DeliveryClientSettings) {
    const connect = buildConnector({ timeout: settings.timeoutMs });
    this.agent = new Agent({
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      keepAliveTimeout: 4000,
      connect: (options, callback) => {
        const host = options.hostname;
        resolvePublicAddress(host, settings.allowPrivateNetworks).then(
          (address) =>
            connect(
              { ...options, hostname: address, servername: options.servername || (isIP(host) ? '' : host) },
              callback,
            ),
          (error: Error) => callback(error, null),
        );
      },
    });
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      await response.body.dump({ limit: RESPONSE_BYTES });
      return { kind: 'answered', status: response.statusCode, latencyMs: elapsed() };
    } catch (error) {
      return { ...classify(error, this.settings.timeoutMs), latencyMs: elapsed() };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => undefined);
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** A failure as a kind and a short message without the URL (it may carry a receiver's token). */
function classify(
  error: unknown,
  timeoutMs: number,
): { kind: 'timeout' | 'network_error' | 'refused_address'; error: string } {
  const failure = error as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (error instanceof AddressRefusedError) return { kind: 'refused_address', error: error.message };
  if (
    failure.name === 'TimeoutError' ||
    failure.name === 'AbortError' ||
    TIMEOUT_CODES.has(failure.code ?? '')
  )
    return { kind: 'timeout', error: `no complete answer within ${timeoutMs} ms` };
  const code = failure.code ?? failure.cause?.code;
  return {
    kind: 'network_error',
    error: code ? `network error ${code}` : (failure.message ?? 'network error').slice(0, 200),
  };
}
