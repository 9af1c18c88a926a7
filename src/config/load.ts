/**
 * Loads and validates the configuration once at boot. A bad file is refused with the file, the path
 * inside it and the problem (`config.yaml: /projects/0/runs/max_ttl_seconds: must be >= 1`).
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parseDocument } from 'yaml';
import { checkConfigSemantics } from './check.js';
import { type AppliedOverride, applyEnvironmentOverrides } from './environment-overrides.js';
import { modelEntryProblems } from './model-entries.js';
import { type Config, ConfigSchema } from './schema.js';
import { schemaProblems } from './schema-problems.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`invalid configuration ${file}:\n${problems.map((problem) => `  ${file}: ${problem}`).join('\n')}`);
  }
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const validate = ajv.compile(ConfigSchema);

/** Validates an already-parsed configuration object (defaults are filled in place). */
export function parseConfig(raw: unknown, file: string, environment: NodeJS.ProcessEnv): Config {
  // Model entries first: their validators fill the entries' defaults and report by entry.
  const modelProblems = modelEntryProblems((raw as { models?: unknown } | null)?.models);
  if (!validate(raw) || modelProblems.length > 0) {
    const problems = schemaProblems(validate.errors ?? []).filter(
      (problem) => !problem.startsWith('/models/'),
    );
    throw new ConfigError(file, dedupe([...problems, ...modelProblems]));
  }
  const config = raw as Config;
  const problems = checkConfigSemantics(config, environment);
  if (problems.length > 0) throw new ConfigError(file, problems);
  return config;
}

export function loadConfig(file: string, environment: NodeJS.ProcessEnv): Config {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(file, [
      `cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    ]);
  }
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    throw new ConfigError(
      file,
      document.errors.map((error) => `YAML: ${error.message.split('\n')[0]}`),
    );
  }
  const raw = (document.toJS() ?? {}) as Record<string, unknown>;
  let overrides: AppliedOverride[];
  try {
    overrides = applyEnvironmentOverrides(raw, environment, Object.keys(ConfigSchema.properties));
  } catch (error) {
    throw new ConfigError(file, [(error as Error).message]);
  }
  try {
    return parseConfig(raw, file, environment);
  } catch (error) {
    if (!(error instanceof ConfigError) || overrides.length === 0) throw error;
    // A problem under an overridden field names the variable it came from.
    const source = (problem: string) =>
      overrides.find((override) => problem === override.path || problem.startsWith(`${override.path}`));
    throw new ConfigError(
      file,
      error.problems.map((problem) => {
        const override = source(problem);
        return override ? `${problem} (set by ${override.variable})` : problem;
      }),
    );
  }
}

function dedupe(lines: string[]): string[] {
  return [...new Set(lines)];
}
