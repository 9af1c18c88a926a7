/** Which primitive (and with which options) serves a profile row, and what it cannot carry. */
import type { MessagesRequest } from '../canonical/types.js';
import type { ProfileRow } from '../catalogue/profiles.js';
import { chatCannotCarry, chatCompletions } from '../primitives/chat-completions/index.js';
import {
  DEFAULT_GENERATE_CONTENT_OPTIONS,
  generateContentCannotCarry,
  generateContentPrimitive,
} from '../primitives/generate-content/index.js';
import { DEFAULT_MESSAGES_OPTIONS, messagesPrimitive } from '../primitives/messages/index.js';
import {
  DEFAULT_RESPONSES_OPTIONS,
  responsesCannotCarry,
  responsesPrimitive,
} from '../primitives/responses/index.js';
import type { Primitive } from '../primitives/shared/types.js';

export interface PrimitiveBinding {
  primitive: Primitive<unknown>;
  options: unknown;
  /** Why the primitive cannot carry the request, or undefined. Called before any I/O. */
  cannotCarry(request: MessagesRequest): string | undefined;
}

const carriesEverything = () => undefined;

function bind<Options>(
  primitive: Primitive<Options>,
  options: Options,
  cannotCarry: PrimitiveBinding['cannotCarry'],
): PrimitiveBinding {
  return { primitive: primitive as Primitive<unknown>, options, cannotCarry };
}

export function bindingFor(row: ProfileRow): PrimitiveBinding {
  switch (row.primitive) {
    case 'messages':
      return bind(messagesPrimitive, DEFAULT_MESSAGES_OPTIONS, carriesEverything);
    case 'chat-completions':
      return bind(chatCompletions, { tokenField: row.tokenField ?? 'max_tokens' }, chatCannotCarry);
    case 'responses':
      return bind(responsesPrimitive, DEFAULT_RESPONSES_OPTIONS, responsesCannotCarry);
    case 'generate-content':
      return bind(generateContentPrimitive, DEFAULT_GENERATE_CONTENT_OPTIONS, generateContentCannotCarry);
    case 'converse':
      throw new Error(`profile ${row.id}: the converse primitive is withheld`);
    default: {
      const never: never = row.primitive;
      throw new Error(`unknown primitive ${String(never)}`);
    }
  }
}
