/**
 * Shared helpers of the body-capture suite: a simulated gateway whose Projects capture (or not), the
 * capture endpoint, and the objects a capture left in the local folder.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { objectsFolder } from '../../src/objects/open-objects.js';
import type { Observability } from '../../src/observability/observability.js';
import { type CallResult, call } from '../support/gateway.js';
import { testProjects } from '../support/projects.js';
import { simulatedUpstreamConfig } from '../support/simulated-gateway.js';
import { type SimulatorWorld, startSimulatorWorld } from '../support/simulator-world.js';

export const SEALING_KEY = 'c'.repeat(64);
export const EMBEDDINGS_ALIAS = 'embed';

export interface CaptureWorldOptions {
  /** prj_a's capture settings; absent: the defaults (off). */
  capture?: Record<string, unknown>;
  /** prj_b's capture settings; absent: the defaults (off). */
  captureB?: Record<string, unknown>;
  clock?: Clock;
  /** Other top-level configuration fields. */
  config?: Record<string, unknown>;
  /** Replaces the objects section (S3); the sealing key variable is always SVC_TEST_SEALING_KEY. */
  objects?: Record<string, unknown>;
  environment?: NodeJS.ProcessEnv;
  observability?: Observability;
}

export function captureProjects(
  captureA: Record<string, unknown> | undefined,
  captureB?: Record<string, unknown>,
): Record<string, unknown>[] {
  const [a, b] = testProjects();
  return [
    { ...a, ...(captureA ? { capture: captureA } : {}) },
    { ...b, ...(captureB ? { capture: captureB } : {}) },
  ];
}

export function startCaptureWorld(options: CaptureWorldOptions = {}): Promise<SimulatorWorld> {
  return startSimulatorWorld({
    environment: { SVC_TEST_SEALING_KEY: SEALING_KEY, ...options.environment },
    ...(options.observability ? { observability: options.observability } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    config: (simUrl) => {
      const upstream = simulatedUpstreamConfig(simUrl);
      return {
        ...upstream,
        models: [
          ...upstream.models,
          {
            alias: EMBEDDINGS_ALIAS,
            endpoint: 'embeddings',
            targets: [
              {
                connection: 'vendorb.chat-embeddings.v1',
                model: 'text-embedding-3-small',
                price: { input_per_mtok_micros: 20_000 },
              },
            ],
          },
          {
            alias: 'tts-1',
            endpoint: 'audio.speech',
            targets: [
              {
                connection: 'vendorb.chat-embeddings.v1',
                model: 'tts-1',
                price: { per_million_characters_micros: 15_000_000 },
              },
            ],
          },
          {
            alias: 'whisper-1',
            endpoint: 'audio.transcriptions',
            targets: [
              {
                connection: 'vendorb.chat-embeddings.v1',
                model: 'whisper-1',
                price: { per_minute_micros: 6_000, max_seconds: 600 },
              },
            ],
          },
        ],
        projects: captureProjects(options.capture, options.captureB),
        objects: options.objects ?? { sealing_key_env: 'SVC_TEST_SEALING_KEY' },
        logging: { level: 'debug' },
        ...options.config,
      };
    },
  });
}

export function getCapture(url: string, key: string, attemptId: string): Promise<CallResult> {
  return call(url, 'GET', `/svc/v1/attempts/${attemptId}/capture`, { key });
}

/** Polls the capture endpoint until it answers 200 (the write is in the background). */
export async function awaitCapture(url: string, key: string, attemptId: string): Promise<CallResult> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const result = await getCapture(url, key, attemptId);
    if (result.status === 200) return result;
    if (Date.now() > deadline) {
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      return result;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every `cap_` object of `projectId` in a local objects folder: name -> stored bytes. */
export function captureObjects(world: SimulatorWorld, projectId = 'prj_a'): Map<string, Buffer> {
  const folder = join(objectsFolder(world.gateway.config), projectId);
  const found = new Map<string, Buffer>();
  if (!existsSync(folder)) return found;
  for (const name of readdirSync(folder))
    if (name.startsWith('cap_')) found.set(name, readFileSync(join(folder, name)));
  return found;
}
