/**
 * evidence_ref is an opaque reference (a ticket number, a document id), never a URL or a secret:
 * it is stored in the journal and shown to anyone with governance:read.
 */
const URL_SHAPED = [/^[a-z][a-z0-9+.-]*:\/\//i, /:\/\//, /^www\./i, /^(mailto|data|file|javascript|urn):/i];
/** C0 and C1 control characters and the Unicode line separators. */
function hasControlCharacter(text: string): boolean {
  for (const character of text) {
    const code = character.codePointAt(0)!;
    if (code <= 0x1f || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029) return true;
  }
  return false;
}
const CREDENTIAL_SHAPED = [
  /gw_[A-Za-z0-9]{8,}/, // our own Gateway Keys
  /\bsk-[A-Za-z0-9_-]{8,}/, // common vendor secret keys
  /\bAKIA[0-9A-Z]{16}\b/, // cloud access key ids
  /\b(ghp|gho|ghs|github_pat)_[A-Za-z0-9_]{10,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  /\bbearer\s+\S+/i,
  /\b(api[_-]?key|secret|password|passwd|token|credential)s?\s*[=:]/i,
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\./, // JWT
];
/** A long unbroken run mixing upper case, lower case and digits looks like a generated secret. */
function looksGenerated(text: string): boolean {
  for (const run of text.match(/[A-Za-z0-9+/=_-]{32,}/g) ?? []) {
    if (/[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run)) return true;
  }
  return false;
}

/** Returns why the reference is refused, or undefined when it is acceptable. */
export function evidenceRefProblem(reference: string): string | undefined {
  if (hasControlCharacter(reference)) return 'evidence_ref: control characters are not allowed';
  if (URL_SHAPED.some((pattern) => pattern.test(reference)))
    return 'evidence_ref: URLs are not allowed; use an opaque reference';
  if (CREDENTIAL_SHAPED.some((pattern) => pattern.test(reference)) || looksGenerated(reference)) {
    return 'evidence_ref: looks like a credential; never put secrets in evidence references';
  }
  return undefined;
}
