/** Every simulated wire, in routing order (the first matching route wins). */
import type { SimWire } from '../types.js';
import { chatCompletionsWire } from './chat-completions.js';
import { generateContentWire } from './generate-content.js';
import { messagesWire } from './messages.js';
import { responsesWire } from './responses.js';

export const defaultWires: SimWire[] = [messagesWire, chatCompletionsWire, responsesWire, generateContentWire];
