/**
 * Who captures what: each Project's `capture` settings (config/schema.ts CaptureSchema) read once,
 * with the defaults for an id no Project has (capture off, the default retention, so the sweep
 * still expires what a removed Project left behind).
 */
import { CaptureSchema, type Config } from '../config/schema.js';

export interface CaptureSettings {
  enabled: boolean;
  retentionMs: number;
  maxBodyBytes: number;
}

const HOUR_MS = 3_600_000;

const DEFAULTS: CaptureSettings = {
  enabled: false,
  retentionMs: (CaptureSchema.properties.retention_hours.default as number) * HOUR_MS,
  maxBodyBytes: CaptureSchema.properties.max_body_bytes.default as number,
};

export class CapturePolicy {
  private readonly byProject = new Map<string, CaptureSettings>();
  /** Whether any Project captures: when none does, nothing on the request path changes. */
  readonly anyEnabled: boolean;

  constructor(projects: Config['projects']) {
    for (const project of projects) {
      const capture = project.capture;
      this.byProject.set(project.id, {
        enabled: capture?.enabled ?? DEFAULTS.enabled,
        retentionMs: (capture?.retention_hours ?? DEFAULTS.retentionMs / HOUR_MS) * HOUR_MS,
        maxBodyBytes: capture?.max_body_bytes ?? DEFAULTS.maxBodyBytes,
      });
    }
    this.anyEnabled = [...this.byProject.values()].some((settings) => settings.enabled);
  }

  of(projectId: string): CaptureSettings {
    return this.byProject.get(projectId) ?? DEFAULTS;
  }
}
