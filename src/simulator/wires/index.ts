/** Every simulated wire, in routing order. */
import type { SimWire } from '../types.js';
import { messagesWire } from './messages.js';

// TODO(lead): import the other wires once they exist and add them to the list below:
// import { chatCompletionsWire } from './chat-completions.js';
// import { responsesWire } from './responses.js';
// import { generateContentWire } from './generate-content.js';

export const defaultWires: SimWire[] = [messagesWire];
