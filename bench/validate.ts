/**
 * Per-call cost of validating a ~1 KB /v1/messages body (both modes) and of the request facts.
 * Run: node --import tsx bench/validate.ts
 */
import { requestFacts, validateMessagesRequest } from '../src/canonical/validate-messages.js';

const body = {
  model: 'claude-alias',
  max_tokens: 1024,
  system: [{ type: 'text', text: 'You are a careful assistant. Answer briefly and cite the tool output.' }],
  temperature: 0.3,
  metadata: { user_id: 'user-1234' },
  tools: [
    {
      name: 'get_weather',
      description: 'Current weather for a city.',
      input_schema: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name' },
          unit: { type: 'string', enum: ['c', 'f'] },
        },
        required: ['city'],
      },
    },
  ],
  tool_choice: { type: 'auto' },
  messages: [
    {
      role: 'user',
      content: 'What is the weather in Lisbon today, and should I take an umbrella when I go out?',
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look that up for you.' },
        { type: 'tool_use', id: 'toolu_01ABCDEF', name: 'get_weather', input: { city: 'Lisbon', unit: 'c' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01ABCDEF',
          content: [
            {
              type: 'text',
              text: '{"temperature": 19, "conditions": "light rain", "precipitation_mm": 2.1}',
            },
          ],
        },
        { type: 'text', text: 'Thanks. Please also tell me what to wear for an evening walk by the river.' },
      ],
    },
  ],
};

const bytes = Buffer.byteLength(JSON.stringify(body));

function measure(label: string, run: () => unknown): void {
  for (let i = 0; i < 50_000; i++) run(); // warm up the JIT
  const iterations = 500_000;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) run();
  const micros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  console.log(`${label.padEnd(34)} ${micros.toFixed(2)} µs/call`);
}

console.log(`request body: ${bytes} bytes`);
measure('validateMessagesRequest portable', () => validateMessagesRequest(body, 'portable'));
measure('validateMessagesRequest native', () => validateMessagesRequest(body, 'native'));
// Fresh objects (as JSON.parse hands them over), cycled so the same object is never validated twice in a row.
const text = JSON.stringify(body);
const fresh = Array.from({ length: 4096 }, () => JSON.parse(text) as unknown);
let next = 0;
measure('portable, fresh parsed bodies', () => validateMessagesRequest(fresh[next++ & 4095], 'portable'));
measure('requestFacts', () => requestFacts(body as never));
