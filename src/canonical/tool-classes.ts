/**
 * Tool classification by `type` (SPEC.md 4.2 mode rule 3).
 *
 * Client-executed vendora-defined families are matched only as `<family>_<YYYYMMDD>`, so a longer
 * name that merely starts with a family (`bash_code_execution_20250825`) is not that family.
 * Provider-executed tools are matched by prefix, dated or not (`tool_search_tool_regex`).
 * Anything else with a `type` other than `custom` is unknown and refused in every mode.
 */
import type { Tool } from './types.js';

export type ClientToolFamily = 'bash' | 'text_editor' | 'memory' | 'computer';
export type ProviderToolFamily = 'web_search' | 'web_fetch' | 'code_execution' | 'advisor' | 'tool_search';

export type ToolClass =
  | { kind: 'custom' }
  | { kind: 'client'; family: ClientToolFamily }
  | { kind: 'provider'; family: ProviderToolFamily }
  | { kind: 'unknown' };

const CLIENT_TYPE = /^(bash|text_editor|memory|computer)_\d{8}$/;
const PROVIDER_TYPE = /^(web_search|web_fetch|code_execution|advisor|tool_search)_/;

const CUSTOM: ToolClass = Object.freeze({ kind: 'custom' });
const UNKNOWN: ToolClass = Object.freeze({ kind: 'unknown' });

/** Classes are cached by type string: a handful of distinct types recur on every call. */
const byType = new Map<string, ToolClass>();
const CACHE_LIMIT = 1024;

/** Classifies a `type` value as found in a tool object (absent means custom). */
export function classifyToolType(type: unknown): ToolClass {
  if (type === undefined || type === 'custom') return CUSTOM;
  if (typeof type !== 'string') return UNKNOWN;
  const cached = byType.get(type);
  if (cached) return cached;
  const toolClass = computeClass(type);
  if (byType.size < CACHE_LIMIT) byType.set(type, toolClass);
  return toolClass;
}

function computeClass(type: string): ToolClass {
  const client = CLIENT_TYPE.exec(type);
  if (client) return Object.freeze({ kind: 'client', family: client[1] as ClientToolFamily });
  const provider = PROVIDER_TYPE.exec(type);
  if (provider) return Object.freeze({ kind: 'provider', family: provider[1] as ProviderToolFamily });
  return UNKNOWN;
}

export function classifyTool(tool: Tool): ToolClass {
  return classifyToolType(tool.type);
}

/** Types of provider-executed tools present in request.tools (e.g. ['web_search_20250305']). */
export function providerExecutedTools(request: { tools?: Tool[] }): string[] {
  const found: string[] = [];
  const tools = request.tools;
  if (!tools) return found;
  for (const tool of tools) {
    if (classifyToolType(tool.type).kind === 'provider') found.push(tool.type as string);
  }
  return found;
}
