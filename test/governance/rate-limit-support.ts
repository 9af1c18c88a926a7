/** Shared by the inference rate-limit suites: a simulated configuration and the two calls they make. */
import { type CallResult, call } from '../support/gateway.js';
import { testProjects } from '../support/projects.js';
import { SIM_MEDIA_MODELS, simulatedConnections } from '../support/resource-gateway.js';
import { messagesHeaders, PRICE } from '../support/simulated-gateway.js';

/**
 * sim-vendora serves alias `chat`, sim-chat the media aliases, `fallback` tries sim-vendora then
 * sim-chat; prj_b carries `projectLimits`.
 */
export function rateLimitedConfig(simUrl: string, projectLimits: Record<string, unknown>) {
  const [projectA, projectB] = testProjects();
  return {
    connections: simulatedConnections(simUrl),
    models: [
      ...SIM_MEDIA_MODELS,
      { alias: 'chat', targets: [{ connection: 'sim-vendora', model: 'up-chat', price: PRICE }] },
      {
        alias: 'fallback',
        targets: [
          { connection: 'sim-vendora', model: 'up-first', price: PRICE },
          { connection: 'sim-chat', model: 'up-second', price: PRICE },
        ],
      },
    ],
    projects: [projectA, { ...projectB, inference_limits: projectLimits }],
  };
}

export function messages(
  url: string,
  key: string,
  maxTokens = 64,
  extra: Record<string, unknown> = {},
): Promise<CallResult> {
  return call(url, 'POST', '/v1/messages', {
    headers: messagesHeaders(key),
    body: { model: 'chat', max_tokens: maxTokens, messages: [{ role: 'user', content: 'Hi' }], ...extra },
  });
}

export function moderation(url: string, key: string): Promise<CallResult> {
  return call(url, 'POST', '/v1/moderations', {
    key,
    headers: { 'svc-route': 'sim-chat' },
    body: { model: 'omni-moderation-latest', input: 'fine text' },
  });
}
