/**
 * Per-profile knobs of the stateless responses primitive. A profile row names its values.
 */
export interface ResponsesOptions {
  /**
   * `name` of the `text.format` json_schema sent for `output_config.format`. The wire requires a
   * name; the canonical request has none, so one fixed name is used.
   */
  schemaName: string;
}

export const DEFAULT_RESPONSES_OPTIONS: ResponsesOptions = Object.freeze({ schemaName: 'output' });
