/**
 * Pure pricing of the experimental side endpoints (integer micro-USD, exact with BigInt):
 *   speech         ceil(characters x price per million characters / 1e6); known before the call,
 *                  so the reservation is the cost.
 *   transcription  ceil(seconds x price per minute / 60), seconds rounded up to the millisecond.
 *                  The duration is unknown until the upstream answers, so the reservation is the
 *                  cost of the connection's transcription_max_seconds (a configured bound); a
 *                  longer reported duration is still committed in full (the ledger records truth)
 *                  and flagged as an overrun.
 *   images         images x price per image; the reservation uses n (default 1).
 *   moderations    one fixed price per request.
 */

function ceilDivide(numerator: bigint, denominator: bigint): number {
  return Number((numerator + denominator - 1n) / denominator);
}

/** Characters as the upstream counts them: Unicode code points. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export function speechCost(characters: number, perMillionCharacters: number): number {
  return ceilDivide(BigInt(characters) * BigInt(perMillionCharacters), 1_000_000n);
}

export function transcriptionCost(seconds: number, perMinute: number): number {
  const milliseconds = BigInt(Math.ceil(seconds * 1000));
  return ceilDivide(milliseconds * BigInt(perMinute), 60_000n);
}

export function imagesCost(images: number, perImage: number): number {
  return images * perImage;
}
