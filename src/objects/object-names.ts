/**
 * Names every object store adapter accepts: a Project id and a key from a strict alphabet, so no
 * `..`, separator or control character can leave the Project's place (folder or key prefix).
 */
export const PROJECT_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const KEY_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}$/;

export function validName(projectId: string, key: string): boolean {
  return PROJECT_PATTERN.test(projectId) && KEY_PATTERN.test(key);
}

export function illegalName(projectId: string, key: string): Error {
  return new Error(`object store: illegal project or key ${JSON.stringify(`${projectId}/${key}`)}`);
}

/** The error a sealed write or read raises without a key; `feature` names who needs it. */
export function sealingRequired(feature: string): Error {
  return new Error(
    `${feature} keeps sealed objects: set objects.sealing_key_env to an environment variable holding a 32-byte key`,
  );
}
