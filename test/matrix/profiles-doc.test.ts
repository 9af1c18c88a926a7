/**
 * docs/profiles.md against the hand-written expected table (SPEC 4.2 as DESIGN resolves it), not
 * against the catalogue it is generated from: a wrong catalogue row would otherwise publish a
 * wrong promise with a green "docs are fresh" test.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXPECTED_PROFILES, type ExpectedField } from './expected-profiles.js';

const DOC = readFileSync(new URL('../../docs/profiles.md', import.meta.url), 'utf8');

/** The markdown table that follows `heading`, as header cells and rows keyed by their first cell. */
function tableAfter(heading: string): { header: string[]; rows: Map<string, string[]> } {
  const start = DOC.indexOf(heading);
  expect(start, `docs/profiles.md has a "${heading}" section`).toBeGreaterThanOrEqual(0);
  const lines = DOC.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('|'));
  const table: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith('|')) break;
    table.push(
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  const [header, , ...body] = table;
  const rows = new Map(body.map((cells) => [cells[0]!.replace(/`/g, ''), cells.slice(1)] as const));
  return { header: header!.slice(1), rows };
}

describe('docs/profiles.md agrees with the expected profile matrix', () => {
  it('lists all 19 profiles, in both tables', () => {
    const summary = tableAfter('## Summary');
    const portable = tableAfter('## Portable mode');
    const ids = EXPECTED_PROFILES.map((row) => row.id);
    expect(ids).toHaveLength(19);
    expect([...summary.rows.keys()].sort()).toEqual([...ids].sort());
    expect([...portable.rows.keys()].sort()).toEqual([...ids].sort());
    for (const id of ids) expect(DOC).toContain(`### \`${id}\``);
  });

  it('every carried / routed-away cell matches the expected table', () => {
    const { header, rows } = tableAfter('## Portable mode');
    const actual: Record<string, Record<string, string>> = {};
    const expected: Record<string, Record<string, string>> = {};
    for (const profile of EXPECTED_PROFILES) {
      const cells = rows.get(profile.id) ?? [];
      actual[profile.id] = Object.fromEntries(
        header.map((field, index) => [field, cells[index] ?? '(missing)']),
      );
      expected[profile.id] = Object.fromEntries(
        header.map((field) => [
          field,
          profile.unsupported.includes(field as ExpectedField) ? 'routed away' : 'carried',
        ]),
      );
    }
    expect(header).toContain('output_config.effort');
    expect(header).toHaveLength(12);
    expect(actual).toEqual(expected);
  });

  it('the summary states primitive, availability, streaming and native mode as expected', () => {
    const { header, rows } = tableAfter('## Summary');
    const column = (name: string) => header.indexOf(name);
    const actual = EXPECTED_PROFILES.map((profile) => {
      const cells = rows.get(profile.id) ?? [];
      return {
        id: profile.id,
        primitive: cells[column('Primitive')],
        availability: cells[column('Availability')],
        streams: cells[column('Streams')],
        native: cells[column('Native mode')] !== 'no',
      };
    });
    const expected = EXPECTED_PROFILES.map((profile) => ({
      id: profile.id,
      primitive: profile.primitive,
      availability: profile.creatable ? 'creatable' : 'withheld',
      streams: profile.stream ? 'yes' : 'no (routed away)',
      native: profile.native,
    }));
    expect(actual).toEqual(expected);
  });

  it('documents the value rules: vendorh.chat.v1 stop sequences and the mantle responses stream-with-tools rule', () => {
    const section = (id: string) => DOC.slice(DOC.indexOf(`### \`${id}\``)).split('\n### ')[0]!;
    for (const profile of EXPECTED_PROFILES) {
      if (profile.stopFiveOf32) expect(section(profile.id)).toMatch(/five sequences of at most 32 bytes/);
      if (profile.noStreamWithTools)
        expect(section(profile.id)).toMatch(/streaming request that carries tools is routed away/);
      if (profile.tokenField)
        expect(section(profile.id)).toContain(`max_tokens is sent as \`${profile.tokenField}\``);
    }
  });
});
