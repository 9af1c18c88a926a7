/**
 * Runs the simulator as its own process: `node dist/src/simulator/main.js --port 9100 [--host 127.0.0.1]`
 * (or `npx tsx src/simulator/main.ts ...`). Prints the URL on stdout; stops on SIGTERM/SIGINT.
 * Drive it over HTTP with the control API (control.ts, `connectSimulator`).
 */
import { parseArgs } from 'node:util';
import { startSimulator } from './server.js';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '9100' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`--port must be 0-65535, got ${values.port}`);
  const simulator = await startSimulator({ port, host: values.host });
  process.stdout.write(`${simulator.url}\n`);
  const stop = () => {
    simulator.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`simulator: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
