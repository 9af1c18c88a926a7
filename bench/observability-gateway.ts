/**
 * The gateway process of bench/observability.ts: started exactly as main.ts starts it (tracing SDK
 * first when configured), from the configuration file given as argv[2]. Prints its URL.
 */
import { loadConfig } from '../src/config/load.js';
import { startGateway } from '../src/gateway-server.js';
import { createLogger } from '../src/lib/logger.js';
import { startConfiguredTracing } from '../src/observability/configured-tracing.js';
import { traceFields } from '../src/observability/log-fields.js';

const config = loadConfig(process.argv[2]!, process.env);
const tracing = await startConfiguredTracing(config);
const logger = createLogger(config.logging.level, undefined, tracing ? traceFields : undefined);
const gateway = await startGateway({ config, environment: process.env, logger, tracing: !!tracing });
process.stdout.write(`listening ${gateway.url}\n`);
process.on('SIGTERM', () => {
  gateway
    .close()
    .then(() => tracing?.shutdown())
    .finally(() => process.exit(0));
});
