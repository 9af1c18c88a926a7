/**
 * Facts about a validated request that routing and the ledger need, each computed in one walk over
 * the blocks (never over the whole JSON). The walks read defensively: a native-mode request may
 * carry members and block types the canonical types do not describe.
 *
 * `cache_control: null` counts as absent (it asks for no breakpoint).
 */
import type { CountTokensRequest, MessagesRequest } from './types.js';

type AnyRequest = MessagesRequest | CountTokensRequest;
type Loose = Record<string, unknown>;

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null;
}

function marked(value: Loose): boolean {
  return value.cache_control !== undefined && value.cache_control !== null;
}

/** Path of a cache_control inside the content nested in one block (search_result text, document content source). */
function nestedCacheControl(block: Loose, path: string): string | undefined {
  let nested: unknown;
  if (block.type === 'search_result') nested = block.content;
  else if (block.type === 'document' && isObject(block.source) && block.source.type === 'content') {
    nested = block.source.content;
  }
  if (!Array.isArray(nested)) return undefined;
  const base = block.type === 'document' ? `${path}.source.content` : `${path}.content`;
  for (let k = 0; k < nested.length; k++) {
    const item: unknown = nested[k];
    if (isObject(item) && marked(item)) return `${base}.${k}.cache_control`;
  }
  return undefined;
}

function blockCacheControl(block: unknown, path: string): string | undefined {
  if (!isObject(block)) return undefined;
  if (marked(block)) return `${path}.cache_control`;
  if (block.type === 'tool_result' && Array.isArray(block.content)) {
    const content: unknown[] = block.content;
    for (let k = 0; k < content.length; k++) {
      const found = blockCacheControl(content[k], `${path}.content.${k}`);
      if (found) return found;
    }
    return undefined;
  }
  return nestedCacheControl(block, path);
}

/** Dotted path of the first cache_control in the request, or undefined. */
export function firstCacheControlPath(request: AnyRequest): string | undefined {
  const system: unknown = request.system;
  if (Array.isArray(system)) {
    for (let i = 0; i < system.length; i++) {
      const found = blockCacheControl(system[i], `system.${i}`);
      if (found) return found;
    }
  }
  const messages: unknown[] = request.messages;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    const content: unknown[] = message.content;
    for (let j = 0; j < content.length; j++) {
      const found = blockCacheControl(content[j], `messages.${i}.content.${j}`);
      if (found) return found;
    }
  }
  const tools: unknown[] = request.tools ?? [];
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    if (isObject(tool) && marked(tool)) return `tools.${i}.cache_control`;
  }
  return undefined;
}

/** Whether cache_control appears anywhere (system blocks, message blocks, nested content, tools). */
export function hasCacheControl(request: AnyRequest): boolean {
  return firstCacheControlPath(request) !== undefined;
}

/** Facts the ledger needs for the worst-case input bound, computed in one walk. */
export interface RequestFacts {
  images: number;
  documents: number;
  /**
   * Total length of the base64 `data` strings of image and document sources (bytes of the JSON
   * text they occupy, at least). Plain-text document data is NOT included: it is tokenised as
   * text, so its bytes must stay in the text part of the bound.
   */
  embeddedDataBytes: number;
}

function countBlock(block: unknown, facts: RequestFacts): void {
  if (!isObject(block)) return;
  switch (block.type) {
    case 'image':
      facts.images++;
      if (isObject(block.source) && block.source.type === 'base64' && typeof block.source.data === 'string') {
        facts.embeddedDataBytes += block.source.data.length;
      }
      return;
    // Native-only blocks that reference media (video, an uploaded file) are bounded like documents.
    case 'video':
    case 'container_upload':
    case 'document': {
      facts.documents++;
      const source = block.source;
      if (!isObject(source)) return;
      if (source.type === 'base64' && typeof source.data === 'string')
        facts.embeddedDataBytes += source.data.length;
      else if (source.type === 'content' && Array.isArray(source.content)) {
        for (const item of source.content as unknown[]) countBlock(item, facts);
      }
      return;
    }
    case 'tool_result':
      if (Array.isArray(block.content))
        for (const item of block.content as unknown[]) countBlock(item, facts);
      return;
    default:
      return;
  }
}

export function requestFacts(request: AnyRequest): RequestFacts {
  const facts: RequestFacts = { images: 0, documents: 0, embeddedDataBytes: 0 };
  for (const message of request.messages as unknown[]) {
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    for (const block of message.content as unknown[]) countBlock(block, facts);
  }
  return facts;
}
