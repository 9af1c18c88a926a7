#!/usr/bin/env node
/**
 * svc-gateway: the command line and composition root. The only file that reads process.env.
 *   serve         start the gateway (store, migrations, HTTP listener)
 *   migrate       apply store migrations and exit
 *   check-config  validate the configuration file and exit
 *   keys create|list|revoke   manage Gateway Keys (a created secret is printed once)
 *   audit         print audit entries
 */
import { Command } from 'commander';
import { ConfigError, loadConfig } from './config/load.js';
import { type Config, SCOPES } from './config/schema.js';
import { startGateway } from './gateway-server.js';
import { keyBody } from './governance/key-views.js';
import { type CreateKeyFields, KeysService } from './governance/keys-service.js';
import { systemClock } from './lib/clock.js';
import { createLogger, writeStandardError } from './lib/logger.js';
import { packageVersion } from './lib/package-version.js';
import { startConfiguredTracing } from './observability/configured-tracing.js';
import { traceFields } from './observability/log-fields.js';
import { bootstrapStore } from './startup/bootstrap.js';
import type { HeldListener } from './startup/held-listener.js';
import { openStore } from './startup/open-store.js';
import { applyV8Policy } from './startup/v8-policy.js';

const DEFAULT_CONFIG = 'config/quickstart.yaml';

interface KeyCreateOptions {
  project: string;
  scopes: string;
  label?: string;
  expiresAt?: string;
  ttlSeconds?: number;
  models?: string;
  capLifetime?: number;
  capDay?: number;
  capMonth?: number;
  rpm?: number;
  tpm?: number;
  config?: string;
}

function configPath(option: string | undefined): string {
  return option ?? process.env.SVC_CONFIG ?? DEFAULT_CONFIG;
}

function load(option: string | undefined): Config {
  return loadConfig(configPath(option), process.env);
}

async function withStore<T>(
  option: string | undefined,
  work: (store: Awaited<ReturnType<typeof openStore>>, config: Config) => Promise<T>,
) {
  const config = load(option);
  const store = await openStore(config, process.env, { exclusive: false });
  try {
    await bootstrapStore(store, config, process.env);
    return await work(store, config);
  } finally {
    await store.close();
  }
}

function serveConfig(option: string | undefined, port: string | undefined): Config {
  const config = load(option);
  if (port !== undefined) {
    const value = Number(port);
    if (!Number.isInteger(value) || value < 0 || value > 65535)
      throw new Error(`--port: expected a port number (0-65535), got ${JSON.stringify(port)}`);
    config.listen.port = value;
  }
  return config;
}

async function serve(option: string | undefined, port: string | undefined): Promise<void> {
  applyV8Policy(process.execArgv);
  const config = serveConfig(option, port);
  const tracing = await startConfiguredTracing(config);
  const logger = createLogger(config.logging.level, undefined, tracing ? traceFields : undefined);
  const start = (current: Config, listener?: HeldListener) =>
    startGateway({ config: current, environment: process.env, logger, tracing: !!tracing, listener });
  let gateway = await start(config);
  // The configuration of the gateway now serving: the last one that started (a reload that fails
  // to start goes back to it, never to the file read at start-up).
  let running = config;
  writeStandardError(banner(gateway.url, config, gateway.quickstartSecret !== undefined));
  let stopping = false;
  let reloading: Promise<void> | undefined;
  // SIGHUP: a graceful restart inside the process. The new configuration is validated first (a bad
  // one is logged and the running gateway keeps serving); then in-flight calls drain (bounded) on
  // the running gateway, and the gateway starts again with the new connections, models and keys.
  // When the listen address stays the same, the listening socket is kept: connections that arrive
  // meanwhile wait and are served by the new gateway, none is refused (startup/held-listener.ts).
  // A new configuration that does not start gives way to the running one, on the same socket. The
  // process never exits on SIGHUP (docs/operations.md).
  const reload = async () => {
    let next: Config;
    try {
      next = serveConfig(option, port);
    } catch (error) {
      logger.error({ err: error }, 'SIGHUP: the configuration is invalid; keeping the running one');
      return;
    }
    logger.info('SIGHUP: reloading (draining in-flight requests, then restarting)');
    const sameAddress =
      next.listen.host === running.listen.host &&
      next.listen.port === running.listen.port &&
      next.listen.host !== 'localhost'; // fastify binds every address of `localhost` itself
    const held = sameAddress ? await gateway.holdListener() : undefined;
    await gateway.close();
    try {
      gateway = await start(next, held);
    } catch (error) {
      logger.error({ err: error }, 'SIGHUP: the new configuration did not start; restarting the running one');
      gateway = await start(running, held);
      return;
    }
    running = next;
    writeStandardError(banner(gateway.url, next, gateway.quickstartSecret !== undefined));
  };
  process.on('SIGHUP', () => {
    if (stopping || reloading) return;
    reloading = reload()
      .catch((error: unknown) => {
        logger.fatal({ err: error }, 'SIGHUP: could not restart the gateway');
        process.exit(1);
      })
      .finally(() => {
        reloading = undefined;
      });
  });
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C or SIGTERM means "now": open attempts are left to the ledger's reaper.
      logger.warn({ signal }, 'second signal: exiting without waiting for the drain');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    Promise.resolve(reloading)
      .then(() => gateway.close())
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

function banner(url: string, config: Config, quickstartUsable: boolean): string {
  const lines = [`\nsvc gateway listening on ${url} (store: ${config.store.kind})`];
  if (config.quickstart && !quickstartUsable) {
    lines.push('The quick-start Gateway Key cannot be used from this process (see the warning above).');
  } else if (config.quickstart) {
    const keyFile = config.quickstart.key_file;
    lines.push(
      `Quick-start Gateway Key (all scopes, project ${config.quickstart.project}) is in ${keyFile}. Try:`,
      `  curl -s ${url}/v1/messages -H "x-api-key: $(cat ${keyFile})" -H 'vendora-version: 2023-06-01' \\`,
      `    -H 'content-type: application/json' -d '{"model":"demo","max_tokens":64,"messages":[{"role":"user","content":"Hello"}]}'`,
      `  curl -s ${url}/svc/v1/work-units -H "Authorization: Bearer $(cat ${keyFile})" -H 'Idempotency-Key: wu-1' \\`,
      `    -H 'content-type: application/json' -d '{}'`,
      'Then, for spend and cost per Outcome (nothing is seeded):',
      `  1. a Run: POST ${url}/svc/v1/runs {"work_unit_id":"wku_..."} (Idempotency-Key, Bearer key)`,
      '  2. model calls attached to it: the first curl above plus -H "X-Svc-Run-ID: run_..."',
      `  3. an Outcome: POST ${url}/svc/v1/work-units/wku_.../outcomes {"definition_id":"odef_resolved","value":true,"observed_at":"<RFC 3339>"}`,
      `  npm run demo does all three (a few Work Units); then open ${url}/console and sign in with the key.`,
    );
  }
  return `${lines.join('\n')}\n\n`;
}

const program = new Command('svc-gateway')
  .description('LLM gateway with run governance')
  .version(packageVersion(), '-V, --version', 'print the version')
  .showHelpAfterError();
const configOption = [
  '-c, --config <file>',
  `configuration file (default: $SVC_CONFIG or ${DEFAULT_CONFIG})`,
] as const;

program
  .command('serve')
  .description('start the gateway')
  .option(...configOption)
  .option('-p, --port <port>', 'listen on this port (overrides listen.port and SVC_LISTEN__PORT)')
  .action(async (options: { config?: string; port?: string }) => {
    await serve(options.config, options.port);
  });

program
  .command('migrate')
  .description('apply store migrations and exit')
  .option(...configOption)
  .action(async (options: { config?: string }) => {
    await withStore(options.config, async (store) => {
      process.stdout.write(`migrations applied (${store.kind})\n`);
    });
  });

program
  .command('check-config')
  .description('validate the configuration file and exit')
  .option(...configOption)
  .action((options: { config?: string }) => {
    const config = load(options.config);
    process.stdout.write(
      `${configPath(options.config)}: OK (${config.projects.length} projects, ${config.connections.length} connections, ${config.models.length} model aliases)\n`,
    );
  });

const keys = program.command('keys').description('manage Gateway Keys (the same service as /svc/v1/keys)');
const integer = (value: string) => {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < 0) throw new Error(`not a non-negative integer: ${value}`);
  return parsed;
};
const list = (value: string) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
keys
  .command('create')
  .description('create a Gateway Key; its secret is printed once and stored only as a SHA-256 hash')
  .requiredOption('--project <id>', 'Project the key belongs to')
  .requiredOption('--scopes <list>', `comma-separated scopes (${SCOPES.join(', ')})`)
  .option('--label <text>', 'free-text label')
  .option('--expires-at <time>', 'RFC 3339 expiry')
  .option('--ttl-seconds <n>', 'expiry in seconds from now', integer)
  .option('--models <list>', 'comma-separated model aliases the key may use (default: every alias)')
  .option('--cap-lifetime <micros>', 'lifetime spend cap in micro-USD', integer)
  .option('--cap-day <micros>', 'spend cap per UTC day in micro-USD', integer)
  .option('--cap-month <micros>', 'spend cap per UTC month in micro-USD', integer)
  .option('--rpm <n>', 'inference requests per minute of this key', integer)
  .option('--tpm <n>', 'inference tokens per minute of this key', integer)
  .option(...configOption)
  .action(async (options: KeyCreateOptions) => {
    const scopes = list(options.scopes);
    const unknown = scopes.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
    if (unknown.length > 0 || scopes.length === 0)
      throw new Error(`unknown scopes: ${unknown.join(', ') || '(none given)'}`);
    await withStore(options.config, async (store, config) => {
      const service = new KeysService({ store, clock: systemClock, config });
      const caps = {
        ...(options.capLifetime === undefined ? {} : { lifetime_micros_usd: options.capLifetime }),
        ...(options.capDay === undefined ? {} : { day_micros_usd: options.capDay }),
        ...(options.capMonth === undefined ? {} : { month_micros_usd: options.capMonth }),
      };
      const created = await service.createDirect(options.project, {
        scopes: scopes as CreateKeyFields['scopes'],
        ...(options.label === undefined ? {} : { label: options.label }),
        ...(options.expiresAt === undefined ? {} : { expires_at: options.expiresAt }),
        ...(options.ttlSeconds === undefined ? {} : { ttl_seconds: options.ttlSeconds }),
        ...(options.models === undefined ? {} : { models: list(options.models) }),
        ...(Object.keys(caps).length === 0 ? {} : { caps }),
        ...(options.rpm === undefined && options.tpm === undefined
          ? {}
          : {
              inference_limits: {
                ...(options.rpm === undefined ? {} : { requests_per_minute: options.rpm }),
                ...(options.tpm === undefined ? {} : { tokens_per_minute: options.tpm }),
              },
            }),
      });
      process.stdout.write(`${JSON.stringify(created)}\n`);
      process.stderr.write('The secret is shown once; store it now.\n');
    });
  });
keys
  .command('list')
  .description('list Gateway Keys (never their secrets)')
  .option('--project <id>', 'only this Project')
  .option(...configOption)
  .action(async (options: { project?: string; config?: string }) => {
    await withStore(options.config, async (store) => {
      const now = systemClock.now();
      for (const key of await store.listKeys(options.project))
        process.stdout.write(`${JSON.stringify(keyBody(key, now))}\n`);
    });
  });
keys
  .command('revoke <id>')
  .description('revoke a Gateway Key (every replica refuses it within auth.key_cache_ms, default 2 s)')
  .option(...configOption)
  .action(async (id: string, options: { config?: string }) => {
    await withStore(options.config, async (store, config) => {
      const service = new KeysService({ store, clock: systemClock, config });
      await service.revokeDirect(id);
      process.stdout.write(`revoked ${id}\n`);
    });
  });

program
  .command('audit')
  .description('print audit entries (one JSON line each; never message content or secrets)')
  .option('--project <id>', 'only this Project')
  .option('--run <id>', 'only this Run')
  .option('--after <sequence>', 'entries after this sequence number', '0')
  .option('--limit <n>', 'at most this many entries', '100')
  .option(...configOption)
  .action(
    async (options: { project?: string; run?: string; after: string; limit: string; config?: string }) => {
      await withStore(options.config, async (store) => {
        const entries = await store.listAudit({
          projectId: options.project,
          runId: options.run,
          afterSequence: Number.parseInt(options.after, 10) || 0,
          limit: Math.min(10_000, Number.parseInt(options.limit, 10) || 100),
        });
        for (const entry of entries) process.stdout.write(`${JSON.stringify(entry)}\n`);
      });
    },
  );

program.parseAsync(process.argv).catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`${error.message}\n`);
  else process.stderr.write(`svc-gateway: ${(error as Error).message}\n`);
  process.exit(2);
});
