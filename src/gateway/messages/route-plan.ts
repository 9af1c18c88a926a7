/**
 * Plans where a validated request may go. Portable mode: every target of the alias in order, each
 * either eligible or routed away with its reasons; none eligible is a 400 naming every target and
 * why. Native mode: exactly the alias's first target, which must be vendora-wire; its profile's
 * "both paths" rules, provider-executed tools and vendora-beta tokens are checked; no fallback.
 */
import type { MessagesRequest } from '../../canonical/types.js';
import {
  type NativeFacts,
  nativeRejections,
  portableSkipReasons,
  presentFields,
  type SkipCode,
  type SkipReason,
} from '../../catalogue/eligibility.js';
import type { ProfileRow } from '../../catalogue/profiles.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ModelAlias, ModelTarget } from '../connections.js';
import { bindingFor, type PrimitiveBinding } from '../primitive-registry.js';

export type RouteMode = 'portable' | 'native';

export interface PlannedTarget {
  target: ModelTarget;
  binding: PrimitiveBinding;
}

export interface SkippedTarget {
  connection: string;
  reasons: string[];
}

/** A target portable routing skipped: its reasons, and the first one's code (for metrics). */
export interface RoutedAway extends SkippedTarget {
  code: SkipCode;
}

export interface RoutePlan {
  mode: RouteMode;
  eligible: PlannedTarget[];
  skipped: RoutedAway[];
  /** vendora-beta tokens to forward (native mode, accepted by the connection). */
  betaTokens: string[];
}

export function parseBetaHeader(header: string | string[] | undefined): string[] {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values
    .flatMap((value) => value.split(','))
    .map((token) => token.trim())
    .filter(Boolean);
}

/** Why a face (not the canonical request) routes a target away: fields only the face's own wire carries. */
export type FaceSkips = (row: ProfileRow) => SkipReason[];

export function planPortable(
  request: MessagesRequest,
  alias: Pick<ModelAlias, 'alias' | 'targets'>,
  betaTokens: string[],
  providerTools: string[],
  faceSkips?: FaceSkips,
): RoutePlan {
  if (betaTokens.length > 0) {
    throw new GatewayError(
      'unsupported_field',
      'vendora-beta: beta tokens are forwarded only in native mode (Svc-Route-Mode: native).',
      {
        param: 'vendora-beta',
      },
    );
  }
  const fields = presentFields(request);
  const eligible: PlannedTarget[] = [];
  const skipped: RoutedAway[] = [];
  for (const target of alias.targets) {
    const binding = bindingFor(target.connection.row);
    const reasons = portableSkipReasons(request, fields, target.connection.row, binding.cannotCarry);
    if (faceSkips) reasons.push(...faceSkips(target.connection.row));
    if (providerTools.length > 0 && !target.connection.providerExecutedTools) {
      reasons.push({
        code: 'provider_tools',
        detail: `provider-executed tools (${providerTools.join(', ')}) not declared by the connection`,
      });
    }
    const [first] = reasons;
    if (!first) eligible.push({ target, binding });
    else
      skipped.push({
        connection: target.connection.name,
        code: first.code,
        reasons: reasons.map((reason) => reason.detail),
      });
  }
  if (eligible.length === 0) {
    const detail = skipped.map((skip) => `${skip.connection}: ${skip.reasons.join('; ')}`).join(' | ');
    throw new GatewayError(
      'no_eligible_route',
      `No target of model ${alias.alias} can carry this request: ${detail}`,
    );
  }
  return { mode: 'portable', eligible, skipped, betaTokens: [] };
}

export function planNative(
  request: MessagesRequest,
  alias: ModelAlias,
  betaTokens: string[],
  providerTools: string[],
  facts: NativeFacts,
): RoutePlan {
  const target = alias.targets[0]!;
  const { connection } = target;
  if (connection.row.native === 'none') {
    throw new GatewayError(
      'unsupported_field',
      `Svc-Route-Mode: native needs a vendora-wire profile; model ${alias.alias} is served by ${connection.row.id} (connection ${connection.name}).`,
      { param: 'svc-route-mode' },
    );
  }
  const reasons = nativeRejections(request, facts, connection.row);
  if (providerTools.length > 0 && !connection.providerExecutedTools) {
    reasons.push(
      `provider-executed tools (${providerTools.join(', ')}) are not declared by connection ${connection.name}`,
    );
  }
  if (betaTokens.length > 0 && !connection.row.forwardsBeta) {
    reasons.push(`vendora-beta is never forwarded by ${connection.row.id}`);
  } else {
    const refused = betaTokens.filter((token) => !connection.betaTokens.has(token));
    if (refused.length > 0)
      reasons.push(`vendora-beta: connection ${connection.name} does not accept ${refused.join(', ')}`);
  }
  if (reasons.length > 0) {
    throw new GatewayError('unsupported_field', `${connection.row.id} (native): ${reasons.join('; ')}`);
  }
  return {
    mode: 'native',
    eligible: [{ target, binding: bindingFor(connection.row) }],
    skipped: [],
    betaTokens,
  };
}

/** Header value describing skipped targets: `conn-a=reason; reason, conn-b=reason`. */
export function skippedHeader(skipped: SkippedTarget[]): string {
  return skipped
    .map((skip) => `${skip.connection}=${skip.reasons.join('; ')}`)
    .join(', ')
    .replace(/[^\x20-\x7e]/g, '?');
}
