/** Building blocks of the OpenAPI document shared by its sections (openapi.ts, openapi-reports.ts). */
import type { TSchema } from '@sinclair/typebox';

/** Plain JSON Schema (TypeBox adds symbol keys only, which JSON.stringify drops). */
export function schema(value: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export function errors(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: 'Error', content: { 'application/json': { schema: ref('Error') } } },
    ]),
  );
}

export const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string' } };

/** Path items of two sections, operations of the same path merged (GET list + POST create). */
export function mergePaths(...sections: Array<Record<string, Record<string, unknown>>>) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const section of sections) {
    for (const [path, item] of Object.entries(section)) paths[path] = { ...paths[path], ...item };
  }
  return paths;
}
