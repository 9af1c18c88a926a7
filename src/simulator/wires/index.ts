/** Every simulated wire, in routing order (the first matching route wins). */
import type { SimWire } from '../types.js';
import { chatBatchesWire } from './chat-batches.js';
import { chatCompletionsWire } from './chat-completions.js';
import { chatEmbeddingsWire } from './chat-embeddings.js';
import { chatResourcesWire } from './chat-resources.js';
import { generateContentWire } from './generate-content.js';
import { messageBatchesWire } from './message-batches.js';
import { messagesWire } from './messages.js';
import { responsesWire } from './responses.js';

export const defaultWires: SimWire[] = [
  messagesWire,
  messageBatchesWire,
  chatCompletionsWire,
  // Before chat-side: it serves the files routes too, so batches read the uploaded files.
  chatBatchesWire,
  chatResourcesWire,
  chatEmbeddingsWire,
  responsesWire,
  generateContentWire,
];
