/** The status and error body of a call the official vendorb SDK rejected with an API error. */
import OpenAI from 'openai';

export async function sdkFailure(
  promise: Promise<unknown>,
): Promise<{ status: number; error: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OpenAI.APIError)
      return { status: error.status ?? 0, error: error.error as Record<string, unknown> };
    throw error;
  }
  throw new Error('expected the call to fail');
}
