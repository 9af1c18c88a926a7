import { describe, expect, it } from 'vitest';
import { classifyTool, classifyToolType, providerExecutedTools, type ToolClass } from './tool-classes.js';
import type { Tool } from './types.js';

describe('rule 5: tool classification', () => {
  const cases: Array<[string | undefined, ToolClass]> = [
    [undefined, { kind: 'custom' }],
    ['custom', { kind: 'custom' }],
    ['bash_20241022', { kind: 'client', family: 'bash' }],
    ['bash_20250124', { kind: 'client', family: 'bash' }],
    ['text_editor_20250124', { kind: 'client', family: 'text_editor' }],
    ['text_editor_20250728', { kind: 'client', family: 'text_editor' }],
    ['memory_20250818', { kind: 'client', family: 'memory' }],
    ['computer_20241022', { kind: 'client', family: 'computer' }],
    ['computer_20251124', { kind: 'client', family: 'computer' }],
    ['computer_20991231', { kind: 'client', family: 'computer' }],
    ['web_search_20250305', { kind: 'provider', family: 'web_search' }],
    ['web_search_20260318', { kind: 'provider', family: 'web_search' }],
    ['web_fetch_20250910', { kind: 'provider', family: 'web_fetch' }],
    ['code_execution_20250522', { kind: 'provider', family: 'code_execution' }],
    ['code_execution_20260521', { kind: 'provider', family: 'code_execution' }],
    ['advisor_20260301', { kind: 'provider', family: 'advisor' }],
    ['tool_search_tool_regex_20251119', { kind: 'provider', family: 'tool_search' }],
    ['tool_search_tool_bm25_20251119', { kind: 'provider', family: 'tool_search' }],
    ['tool_search_tool_regex', { kind: 'provider', family: 'tool_search' }],
    ['tool_search_tool_bm25', { kind: 'provider', family: 'tool_search' }],
    // Longer names that merely start with a client family are classified on their own.
    ['bash_code_execution_20250825', { kind: 'unknown' }],
    ['text_editor_code_execution_20250825', { kind: 'unknown' }],
    ['computer_toolset_20260801', { kind: 'unknown' }],
    ['browser_toolset_20260801', { kind: 'unknown' }],
    ['bash', { kind: 'unknown' }],
    ['bash_2025012', { kind: 'unknown' }],
    ['bash_202501245', { kind: 'unknown' }],
    ['BASH_20250124', { kind: 'unknown' }],
    ['mcp_toolset', { kind: 'unknown' }],
    ['web_search', { kind: 'unknown' }],
    ['', { kind: 'unknown' }],
  ];

  it.each(cases)('%s -> %j', (type, expected) => {
    expect(classifyToolType(type)).toEqual(expected);
    expect(classifyTool({ type, name: 'n' } as Tool)).toEqual(expected);
  });

  it('classifies a non-string type as unknown', () => {
    expect(classifyToolType(5)).toEqual({ kind: 'unknown' });
    expect(classifyToolType(null)).toEqual({ kind: 'unknown' });
  });

  it('lists the provider-executed tools of a request, in order', () => {
    const tools = [
      { name: 'lookup', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search' },
      { type: 'bash_20250124', name: 'bash' },
      { type: 'tool_search_tool_regex', name: 'tool_search_tool_regex' },
    ] as Tool[];
    expect(providerExecutedTools({ tools })).toEqual(['web_search_20250305', 'tool_search_tool_regex']);
    expect(providerExecutedTools({})).toEqual([]);
  });
});
