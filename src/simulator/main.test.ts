import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connectSimulator } from './control.js';

const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

describe('simulator CLI', () => {
  it('prints its URL, serves the control API and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', MAIN, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n')[0];
          if (output.includes('\n') && line !== undefined) resolve(line.trim());
        });
        child.once('exit', (code) => reject(new Error(`simulator exited early (${code})`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const remote = connectSimulator(url);
      await remote.setBehaviour({ text: 'from the CLI' }, { times: 1 });
      const response = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(((await response.json()) as { content: Array<{ text: string }> }).content[0]!.text).toBe(
        'from the CLI',
      );
      expect(await remote.requests({ model: 'm' })).toHaveLength(1);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
