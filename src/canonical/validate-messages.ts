/**
 * Strict validation of /v1/messages and /v1/messages/count_tokens bodies (SPEC.md 4.2, 4.3).
 *
 * One pass: top-level keys (unknown and boundary fields) -> compiled schema of the scalar fields ->
 * a hand walk over messages, blocks and tools that makes the mode decisions and hands each leaf
 * object to its compiled schema -> cross-field rules. The body is returned as is: no copy, no
 * defaults. Every error names its field (`param` is the dotted path).
 *
 *   portable  only what the canonical model carries: unknown members of blocks and tools, vendora-
 *             defined tools, strict tools, signed thinking, cache_control and native-only blocks
 *             are refused (unsupported_field; native mode is the fix).
 *   native    the canonical blocks plus server-tool replay blocks, container_upload, video and
 *             mid-conversation system turns; extra members of blocks and tools are forwarded verbatim.
 */
import type { ValidateFunction } from 'ajv';
import type { ErrorCode } from '../errors/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import { BLOCK_VALIDATORS, TOOL_VALIDATORS, TOP_LEVEL_VALIDATORS } from './message-schemas.js';
import { firstCacheControlPath } from './request-facts.js';
import { describeViolation } from './schema-errors.js';
import { classifyToolType } from './tool-classes.js';
import type { CountTokensRequest, MessagesRequest } from './types.js';

export type RouteMode = 'portable' | 'native';

// The module's face: the lead imports the whole request-checking API from here.
export { hasCacheControl, type RequestFacts, requestFacts } from './request-facts.js';
export { classifyTool, providerExecutedTools, type ToolClass } from './tool-classes.js';

type Loose = Record<string, unknown>;
type Role = 'user' | 'assistant' | 'system';

const MESSAGES_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'stream',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
  'service_tier',
  'output_config',
]);
const COUNT_TOKENS_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
]);
const BOUNDARY_FIELDS: ReadonlySet<string> = new Set(['mcp_servers', 'container', 'fallbacks']);

interface BlockRule {
  /** The turn the block may appear in ('any' = user, assistant or system text). */
  role: 'user' | 'assistant' | 'any';
  /** Carried by the canonical model (portable mode). */
  canonical: boolean;
}

const BLOCK_RULES: ReadonlyMap<string, BlockRule> = new Map([
  ['text', { role: 'any', canonical: true }],
  ['image', { role: 'user', canonical: true }],
  ['document', { role: 'user', canonical: true }],
  ['search_result', { role: 'user', canonical: true }],
  ['tool_use', { role: 'assistant', canonical: true }],
  ['tool_result', { role: 'user', canonical: true }],
  ['thinking', { role: 'assistant', canonical: true }],
  ['redacted_thinking', { role: 'assistant', canonical: true }],
  ['server_tool_use', { role: 'assistant', canonical: false }],
  ['web_search_tool_result', { role: 'assistant', canonical: false }],
  ['web_fetch_tool_result', { role: 'assistant', canonical: false }],
  ['code_execution_tool_result', { role: 'assistant', canonical: false }],
  ['bash_code_execution_tool_result', { role: 'assistant', canonical: false }],
  ['text_editor_code_execution_tool_result', { role: 'assistant', canonical: false }],
  ['tool_search_tool_result', { role: 'assistant', canonical: false }],
  ['container_upload', { role: 'user', canonical: false }],
  ['video', { role: 'user', canonical: false }],
]);

/** Block types allowed inside tool_result.content, and whether the canonical model carries them. */
const TOOL_RESULT_CONTENT: ReadonlyMap<string, boolean> = new Map([
  ['text', true],
  ['image', true],
  ['search_result', true],
  ['document', true],
  ['tool_reference', false],
]);

const SIGNED_THINKING: ReadonlySet<string> = new Set(['thinking', 'redacted_thinking']);

function fail(code: ErrorCode, field: string, message: string): never {
  throw new GatewayError(code, `${field}: ${message}`, { param: field });
}

function isObject(value: unknown): value is Loose {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Runs a compiled schema. In portable mode an unknown member of a block or tool is something
 * only native mode forwards, so it is refused as unsupported rather than malformed.
 */
function check(
  validate: ValidateFunction,
  value: unknown,
  path: string,
  unknownIsUnsupported: boolean,
): void {
  if (validate(value)) return;
  const violation = describeViolation(validate.errors ?? [], path);
  if (violation.unknownMember && unknownIsUnsupported) {
    fail(
      'unsupported_field',
      violation.field,
      'unknown member; portable mode carries only the canonical members (native mode forwards it verbatim)',
    );
  }
  throw new GatewayError('invalid_request', violation.message, { param: violation.field });
}

function validatorFor(mode: RouteMode, type: string): ValidateFunction | undefined {
  const validators: Readonly<Record<string, ValidateFunction>> = BLOCK_VALIDATORS[mode];
  return Object.hasOwn(validators, type) ? validators[type] : undefined;
}

function checkToolResultContent(block: Loose, path: string, mode: RouteMode): void {
  const content = block.content;
  if (!Array.isArray(content)) return;
  for (let k = 0; k < content.length; k++) {
    const item = content[k] as Loose; // the tool_result schema checked: an object with a string type
    const itemPath = `${path}.content.${k}`;
    const type = item.type as string;
    const canonical = TOOL_RESULT_CONTENT.get(type);
    if (canonical === undefined) {
      if (mode === 'portable') {
        fail(
          'unsupported_field',
          `${itemPath}.type`,
          `block type ${type} cannot be carried in portable mode`,
        );
      }
      fail('invalid_request', `${itemPath}.type`, `block type ${type} is not allowed in tool_result content`);
    }
    if (!canonical && mode === 'portable') {
      fail(
        'unsupported_field',
        `${itemPath}.type`,
        `block type ${type} cannot be carried in portable mode (use native mode)`,
      );
    }
    check(validatorFor(mode, type)!, item, itemPath, mode === 'portable');
  }
}

function checkBlock(block: unknown, path: string, role: Role, mode: RouteMode): void {
  if (!isObject(block)) fail('invalid_request', path, 'must be an object');
  const type = block.type;
  if (typeof type !== 'string') fail('invalid_request', `${path}.type`, 'required (a string)');
  const rule = BLOCK_RULES.get(type);
  if (!rule) {
    if (mode === 'portable') {
      fail('unsupported_field', `${path}.type`, `block type ${type} cannot be carried in portable mode`);
    }
    fail('invalid_request', `${path}.type`, `unknown block type ${type}`);
  }
  if (mode === 'portable') {
    if (!rule.canonical) {
      fail(
        'unsupported_field',
        `${path}.type`,
        `block type ${type} cannot be carried in portable mode (use native mode)`,
      );
    }
    if (SIGNED_THINKING.has(type)) {
      fail('unsupported_field', `${path}.type`, `signed thinking (${type} blocks) needs native mode`);
    }
  }
  if (role === 'system' ? type !== 'text' : rule.role !== 'any' && rule.role !== role) {
    const allowed = role === 'system' ? 'text blocks only' : `${type} blocks only in ${rule.role} turns`;
    fail('invalid_request', `${path}.type`, `not allowed in a ${role} turn (${allowed})`);
  }
  check(validatorFor(mode, type)!, block, path, mode === 'portable');
  if (type === 'tool_result') checkToolResultContent(block, path, mode);
}

function checkContent(content: unknown, path: string, role: Role, mode: RouteMode): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content))
    fail('invalid_request', path, 'must be a string or an array of content blocks');
  if (content.length === 0) fail('invalid_request', path, 'must not be an empty array');
  for (let j = 0; j < content.length; j++) checkBlock(content[j], `${path}.${j}`, role, mode);
}

function checkMessages(messages: unknown[], mode: RouteMode): void {
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    const path = `messages.${i}`;
    if (!isObject(message)) fail('invalid_request', path, 'must be an object');
    for (const key in message) {
      if (key !== 'role' && key !== 'content') fail('invalid_request', `${path}.${key}`, 'unknown field');
    }
    const role = message.role;
    if (role === 'system') {
      if (mode === 'portable') {
        fail('unsupported_field', `${path}.role`, 'mid-conversation system turns need native mode');
      }
    } else if (role !== 'user' && role !== 'assistant') {
      fail(
        'invalid_request',
        `${path}.role`,
        role === undefined ? 'required' : 'must be "user" or "assistant"',
      );
    }
    if (message.content === undefined) fail('invalid_request', `${path}.content`, 'required');
    checkContent(message.content, `${path}.content`, role, mode);
  }
}

function checkSystem(system: unknown, mode: RouteMode): void {
  if (!Array.isArray(system)) return; // a string (the schema checked the type)
  for (let i = 0; i < system.length; i++) checkBlock(system[i], `system.${i}`, 'system', mode);
}

function checkTools(tools: unknown[], mode: RouteMode): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i < tools.length; i++) {
    const tool = tools[i];
    const path = `tools.${i}`;
    if (!isObject(tool)) fail('invalid_request', path, 'must be an object');
    const toolClass = classifyToolType(tool.type);
    switch (toolClass.kind) {
      case 'unknown':
        if (typeof tool.type !== 'string') fail('invalid_request', `${path}.type`, 'must be a string');
        fail('invalid_request', `${path}.type`, `unknown tool type ${tool.type}`);
        break;
      case 'custom':
        check(TOOL_VALIDATORS[mode].custom, tool, path, mode === 'portable');
        if (mode === 'portable' && tool.strict !== undefined) {
          fail('unsupported_field', `${path}.strict`, 'strict tools need native mode');
        }
        break;
      case 'client':
        if (mode === 'portable') {
          fail('unsupported_field', `${path}.type`, `vendora-defined tool ${tool.type} needs native mode`);
        }
        check(TOOL_VALIDATORS.native.defined, tool, path, false);
        break;
      case 'provider':
        if (mode === 'portable') {
          fail(
            'unsupported_field',
            `${path}.type`,
            `provider-executed tool ${tool.type} needs native mode and a connection that declares provider_executed_tools`,
          );
        }
        check(TOOL_VALIDATORS.native.defined, tool, path, false);
        break;
      default: {
        const never: never = toolClass;
        return never;
      }
    }
    const name = tool.name as string;
    if (names.has(name)) fail('invalid_request', `${path}.name`, `duplicate tool name ${name}`);
    names.add(name);
  }
  return names;
}

/** Everything after the top-level schema: the walk and the cross-field rules. */
function checkBody(body: Loose, mode: RouteMode): void {
  checkSystem(body.system, mode);
  checkMessages(body.messages as unknown[], mode);
  const names = checkTools((body.tools as unknown[] | undefined) ?? [], mode);
  const toolChoice = body.tool_choice as { type: string; name?: string } | undefined;
  if (toolChoice?.type === 'tool' && !names.has(toolChoice.name!)) {
    fail('invalid_request', 'tool_choice.name', `names no tool in tools: ${toolChoice.name}`);
  }
  const thinking = body.thinking as { type: string; budget_tokens?: number } | undefined;
  const maxTokens = body.max_tokens as number | undefined;
  if (thinking?.type === 'enabled' && maxTokens !== undefined && thinking.budget_tokens! >= maxTokens) {
    fail('invalid_request', 'thinking.budget_tokens', `must be less than max_tokens (${maxTokens})`);
  }
  if (mode === 'portable') {
    const marked = firstCacheControlPath(body as unknown as MessagesRequest);
    if (marked) fail('unsupported_field', marked, 'cache_control needs native mode');
  }
}

function checkTopLevelKeys(body: Loose, known: ReadonlySet<string>, countTokens: boolean): void {
  for (const key in body) {
    if (known.has(key)) continue;
    if (BOUNDARY_FIELDS.has(key)) {
      throw new GatewayError(
        'unsupported_field',
        `${key} is not supported by this gateway (deliberate boundary)`,
        {
          param: key,
        },
      );
    }
    if (countTokens && key === 'stream') {
      fail('unsupported_field', key, 'not supported on count_tokens (count_tokens does not stream)');
    }
    fail('invalid_request', key, 'unknown field');
  }
}

function asObject(body: unknown): Loose {
  if (!isObject(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
  return body;
}

/** Throws GatewayError naming the field (param = dotted path). Returns the body typed, unchanged. */
export function validateMessagesRequest(body: unknown, mode: RouteMode): MessagesRequest {
  const record = asObject(body);
  checkTopLevelKeys(record, MESSAGES_FIELDS, false);
  check(TOP_LEVEL_VALIDATORS.messages, record, '', false);
  checkBody(record, mode);
  return record as unknown as MessagesRequest;
}

/** count_tokens is served natively only, so its blocks and tools follow the native rules. */
export function validateCountTokensRequest(body: unknown): CountTokensRequest {
  const record = asObject(body);
  checkTopLevelKeys(record, COUNT_TOKENS_FIELDS, true);
  check(TOP_LEVEL_VALIDATORS.countTokens, record, '', false);
  checkBody(record, 'native');
  return record as unknown as CountTokensRequest;
}
