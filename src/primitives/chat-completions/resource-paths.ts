/**
 * The chat-completions wire's resources (files, and the media endpoints: embeddings, speech,
 * transcriptions, images, moderations): paths below the connection's base URL and the few facts
 * the gateway reads from their answers.
 * Pure: no I/O. Answers are read leniently (strict on what clients send, lenient on upstreams).
 */

export const RESOURCE_PATHS = {
  files: '/files',
  embeddings: '/embeddings',
  speech: '/audio/speech',
  transcriptions: '/audio/transcriptions',
  images: '/images/generations',
  moderations: '/moderations',
} as const;

export function filePath(upstreamFileId: string): string {
  return `${RESOURCE_PATHS.files}/${encodeURIComponent(upstreamFileId)}`;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** The upstream's id of an uploaded file (`{"id": "file-...", "object": "file", ...}`). */
export function uploadedFileId(body: unknown): string | undefined {
  const id = record(body)?.id;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
}

/** How many images an images answer carries (`data[]`). */
export function imageCount(body: unknown): number | undefined {
  const data = record(body)?.data;
  return Array.isArray(data) ? data.length : undefined;
}

/**
 * Seconds of audio a transcription answer reports: `usage: {type: "duration", seconds}` (json) or
 * `duration` (verbose_json). Undefined when the answer does not say (text formats, token usage).
 */
export function transcriptionSeconds(body: unknown): number | undefined {
  const answer = record(body);
  const usage = record(answer?.usage);
  if (usage?.type === 'duration' && typeof usage.seconds === 'number' && usage.seconds >= 0)
    return usage.seconds;
  if (typeof answer?.duration === 'number' && answer.duration >= 0) return answer.duration;
  return undefined;
}

/**
 * Input tokens an embeddings answer reports: `usage.prompt_tokens`, else `usage.total_tokens`
 * (embeddings have no output tokens). Undefined when the answer does not say.
 */
export function embeddingsInputTokens(body: unknown): number | undefined {
  const usage = record(record(body)?.usage);
  for (const value of [usage?.prompt_tokens, usage?.total_tokens]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  }
  return undefined;
}
