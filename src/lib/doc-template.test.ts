import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fillDocTemplate } from './doc-template.js';

function template(text: string): URL {
  const file = join(mkdtempSync(join(tmpdir(), 'doc-template-')), 'page.md.tmpl');
  writeFileSync(file, text);
  return pathToFileURL(file);
}

describe('fillDocTemplate', () => {
  it('fills every placeholder once, leaving the rest of the text (dollars and backticks too) as is', () => {
    const page = template('# `A`\n\n{{rows}}\n$1 {{count}} {{rows}}\n');
    expect(fillDocTemplate(page, { rows: '| $& |', count: '3' })).toBe('# `A`\n\n| $& |\n$1 3 | $& |\n');
  });

  it('refuses a placeholder without a value and a value without a placeholder', () => {
    expect(() => fillDocTemplate(template('{{rows}} {{other}}\n'), { rows: 'x' })).toThrow(
      'no value for {{other}}',
    );
    expect(() => fillDocTemplate(template('{{rows}}\n'), { rows: 'x', extra: 'y' })).toThrow(
      'no placeholder for extra',
    );
  });
});
