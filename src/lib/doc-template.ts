/**
 * Fills a generated doc's template: the prose lives in a `.md.tmpl` file beside its generator, and
 * each `{{name}}` in it is replaced by the value the generator computes from the code. A
 * placeholder without a value, or a value without a placeholder, is an error, so the template and
 * its generator cannot drift apart. Read only when a doc is rendered (`npm run docs` and the
 * generated-docs tests), never at gateway start-up.
 */
import { readFileSync } from 'node:fs';

export function fillDocTemplate(template: URL, values: Readonly<Record<string, string>>): string {
  const used = new Set<string>();
  const text = readFileSync(template, 'utf8').replace(/\{\{(\w+)\}\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${template.pathname}: no value for {{${name}}}`);
    used.add(name);
    return value;
  });
  const unused = Object.keys(values).filter((name) => !used.has(name));
  if (unused.length > 0) throw new Error(`${template.pathname}: no placeholder for ${unused.join(', ')}`);
  return text;
}
