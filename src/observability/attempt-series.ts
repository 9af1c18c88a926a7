/**
 * The metric children of one attempt label set (Project, key-free: alias, connection, endpoint,
 * profile, model), resolved once and reused, so recording an attempt does no label hashing.
 * Children that also depend on what the settlement says (outcome, response model, error class)
 * are resolved once per distinct value and kept in small maps.
 */
import type { Gauge } from 'prom-client';
import type { SettlementOutcome } from '../money/settlement.js';
import type { AttemptLabels, AttemptSettled } from './attempt-observer.js';
import { errorClass } from './error-types.js';
import type { CounterCell, GatewayMetrics, HistogramCell } from './metrics.js';

type CounterChild = CounterCell;
type HistogramChild = HistogramCell;
type GaugeChild = Gauge.Internal<string>;

export type SeriesCache = Map<string, AttemptSeries>;

/** gen_ai.operation.name for an endpoint (`chat` for Messages; the endpoint's name otherwise). */
export function operationName(endpoint: string): string {
  const name = endpoint.startsWith('/v1/') ? endpoint.slice(4) : endpoint;
  switch (name) {
    case 'messages':
    case 'responses':
    case 'chat/completions':
      return 'chat';
    case 'embeddings':
      return 'embeddings';
    default:
      return name.replaceAll('/', '.');
  }
}

/** gen_ai.provider.name: the vendor part of the profile id (`vendora.messages.2023-06-01` -> `vendora`). */
export function providerName(profile: string): string {
  const dot = profile.indexOf('.');
  return dot < 0 ? profile : profile.slice(0, dot);
}

interface SettledChildren {
  duration: HistogramChild;
  inputTokens: HistogramChild;
  outputTokens: HistogramChild;
}

export class AttemptSeries {
  readonly admitted: CounterChild;
  readonly openStreams: GaugeChild;
  readonly timeToFirstChunk: HistogramChild;
  private readonly cost: CounterChild;
  private readonly unknown: CounterChild;
  private readonly outcomes = new Map<SettlementOutcome, CounterChild>();
  private readonly bySettlement = new Map<string, SettledChildren>();
  private readonly errors = new Map<string, CounterChild>();
  private readonly base: Record<string, string>;

  static of(cache: SeriesCache, metrics: GatewayMetrics, labels: AttemptLabels): AttemptSeries {
    const key = `${labels.projectId}\u0000${labels.alias}\u0000${labels.connection}\u0000${labels.endpoint}\u0000${labels.profile}`;
    let series = cache.get(key);
    if (!series) {
      series = new AttemptSeries(metrics, labels);
      cache.set(key, series);
    }
    return series;
  }

  private constructor(
    private readonly metrics: GatewayMetrics,
    labels: AttemptLabels,
  ) {
    const project = metrics.bounded('project', labels.projectId);
    const alias = metrics.bounded('alias', labels.alias);
    const connection = metrics.bounded('connection', labels.connection);
    const endpoint = metrics.bounded('endpoint', labels.endpoint);
    this.base = {
      project,
      alias,
      connection,
      gen_ai_operation_name: operationName(labels.endpoint),
      gen_ai_provider_name: providerName(labels.profile),
      gen_ai_request_model: alias,
    };
    this.admitted = metrics.counterCell('svc_reservations_admitted_total', {
      project,
      alias,
      connection,
      endpoint,
    });
    this.openStreams = metrics.gauge('svc_open_streams').labels({ connection });
    this.timeToFirstChunk = metrics.histogramCell('gen_ai_client_operation_time_to_first_chunk_seconds', {
      gen_ai_operation_name: this.base.gen_ai_operation_name!,
      gen_ai_provider_name: this.base.gen_ai_provider_name!,
      gen_ai_request_model: alias,
      connection,
    });
    this.cost = metrics.counterCell('svc_cost_micros_usd_total', { project, alias, connection });
    this.unknown = metrics.counterCell('svc_unknown_attempts_total', { project, alias, connection });
  }

  /** `errorType` is the runner's detail; the series carry its class (errorClass). */
  settled(result: AttemptSettled): void {
    const errorType = result.errorType ? errorClass(result.errorType) : '';
    const children = this.settledChildren(result.responseModel ?? '', errorType);
    children.duration.observe(result.durationMs / 1000);
    if (result.tokens) {
      const tokens = result.tokens;
      children.inputTokens.observe(
        tokens.inputTokens + tokens.cacheCreationInputTokens + tokens.cacheReadInputTokens,
      );
      children.outputTokens.observe(tokens.outputTokens);
    }
    if (result.costMicrosUsd > 0) this.cost.inc(result.costMicrosUsd);
    this.outcome(result.outcome).inc();
    if (result.outcome === 'unknown') this.unknown.inc();
    if (errorType) this.error(errorType).inc();
  }

  private outcome(outcome: SettlementOutcome): CounterChild {
    let child = this.outcomes.get(outcome);
    if (!child) {
      const { project, alias, connection } = this.base as Record<'project' | 'alias' | 'connection', string>;
      child = this.metrics.counterCell('svc_settlements_total', { project, alias, connection, outcome });
      this.outcomes.set(outcome, child);
    }
    return child;
  }

  private error(errorType: string): CounterChild {
    let child = this.errors.get(errorType);
    if (!child) {
      child = this.metrics.counterCell('svc_upstream_errors_total', {
        connection: this.base.connection!,
        error_type: errorType,
      });
      this.errors.set(errorType, child);
    }
    return child;
  }

  private settledChildren(responseModel: string, errorType: string): SettledChildren {
    const key = `${responseModel}\u0000${errorType}`;
    let children = this.bySettlement.get(key);
    if (!children) {
      const model = this.metrics.bounded('response_model', responseModel);
      const common = {
        gen_ai_operation_name: this.base.gen_ai_operation_name!,
        gen_ai_provider_name: this.base.gen_ai_provider_name!,
        gen_ai_request_model: this.base.gen_ai_request_model!,
        gen_ai_response_model: model,
        connection: this.base.connection!,
      };
      children = {
        duration: this.metrics.histogramCell('gen_ai_client_operation_duration_seconds', {
          ...common,
          error_type: errorType,
        }),
        inputTokens: this.metrics.histogramCell('gen_ai_client_token_usage', {
          ...common,
          gen_ai_token_type: 'input',
        }),
        outputTokens: this.metrics.histogramCell('gen_ai_client_token_usage', {
          ...common,
          gen_ai_token_type: 'output',
        }),
      };
      this.bySettlement.set(key, children);
    }
    return children;
  }
}
