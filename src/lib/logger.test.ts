import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('./logger.ts', import.meta.url));

/** Runs `code` in a child process with the logger loaded; resolves with its stdout once it is gone. */
function stdoutOf(code: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import { createLogger } from ${JSON.stringify(LOGGER)};\n${code}`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', () => resolve(output));
  });
}

describe('logger on standard output', () => {
  it('has written every line by the time the process is killed outright', async () => {
    const output = await stdoutOf(`
      const logger = createLogger('info');
      for (let index = 0; index < 2000; index++) logger.info({ index }, 'line');
      process.kill(process.pid, 'SIGKILL');
    `);
    const lines = output.trim().split('\n');
    expect(lines).toHaveLength(2000);
    expect(JSON.parse(lines[1999]!)).toMatchObject({ index: 1999, msg: 'line', service: 'svc-gateway' });
  });

  it('redacts credentials in the lines it writes', async () => {
    const output = await stdoutOf(`
      createLogger('info').info({ headers: { 'x-api-key': 'gw_secret' }, password: 'hunter2' }, 'line');
    `);
    expect(output).not.toContain('gw_secret');
    expect(output).not.toContain('hunter2');
    expect(JSON.parse(output)).toMatchObject({
      headers: { 'x-api-key': '[redacted]' },
      password: '[redacted]',
    });
  });
});
