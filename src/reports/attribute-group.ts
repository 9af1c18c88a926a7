/**
 * `tag.<key>` and `metadata.<key>` in a report's group_by: parsing, the key syntax (the same as the
 * keys that can be set: docs/request-log.md), and the row field that carries the value.
 */
import type { AttributeRef } from '../store/reports-port.js';
import { badParameter } from './params.js';

/** The key of a tag or of a metadata entry: 1-64 characters, a letter first. */
export const ATTRIBUTE_KEY_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

const KEY_RULE =
  'the key after "tag." or "metadata." is 1-64 characters from A-Z a-z 0-9 _ . -, starting with a letter';

/** `tag.team` -> { kind: 'tag', name: 'team' }; undefined when the name is no attribute group. */
export function parseAttributeGroup(param: string, name: string): AttributeRef | undefined {
  const kind = name.startsWith('tag.') ? 'tag' : name.startsWith('metadata.') ? 'metadata' : undefined;
  if (kind === undefined) return undefined;
  const key = name.slice(kind.length + 1);
  if (!ATTRIBUTE_KEY_PATTERN.test(key)) {
    throw badParameter(param, `${JSON.stringify(name)}: ${KEY_RULE}.`);
  }
  return { kind, name: key };
}

/** The row field carrying an attribute's value: `tag.team`, `metadata.customer`. */
export function attributeField(attribute: AttributeRef): string {
  return `${attribute.kind}.${attribute.name}`;
}
