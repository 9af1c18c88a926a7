/**
 * GET /svc/v1/attempts/{id}/capture (scope captures:read): the bodies captured for an attempt's
 * call (capture/capture-reader.ts). Authentication, the governance rate limit and the scope check
 * are the governance guard's, as on every /svc/v1 route. No capture, an expired one, an unknown id
 * and another Project's attempt all answer the same 404 capture_not_found. Bodies are never cached.
 */
import type { FastifyInstance } from 'fastify';
import type { CaptureReader } from '../capture/capture-reader.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Guard } from './governance-routes.js';

export const CAPTURES_SCOPE = 'captures:read';

export function registerCaptureRoutes(
  app: FastifyInstance,
  deps: { guard: Guard; reader: CaptureReader },
): void {
  app.get<{ Params: { id: string } }>('/svc/v1/attempts/:id/capture', async (request, reply) => {
    const caller = await deps.guard(request, CAPTURES_SCOPE);
    const capture = await deps.reader.read(caller.projectId, request.params.id);
    if (!capture) {
      throw new GatewayError(
        'capture_not_found',
        `No capture for attempt ${request.params.id}: none was kept, it expired, or the attempt is not in this Project.`,
      );
    }
    return reply.header('cache-control', 'no-store').send(capture);
  });
}
