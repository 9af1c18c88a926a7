/** Checks a schema-valid configuration for problems a schema cannot express (references, ranges). */
import { findProfile } from '../catalogue/profiles.js';
import { servesResource } from '../catalogue/resource-profiles.js';
import { KEY_SECRET_PATTERN, WEBHOOK_SECRET_PATTERN } from '../lib/secrets.js';
import { legacyResourcePriceProblems, mediaPriceProblems } from './media-prices.js';
import { type Config, isMessagesModel, MODEL_ENDPOINTS } from './schema.js';

const MEDIA_ENDPOINTS = MODEL_ENDPOINTS.filter((endpoint) => endpoint !== 'messages');

export const EXPERIMENTAL_ENDPOINTS = [
  'files',
  'batches',
  'responses',
  'audio.speech',
  'audio.transcriptions',
  'images.generations',
  'moderations',
  'embeddings',
] as const;

export function checkConfigSemantics(config: Config, environment: NodeJS.ProcessEnv): string[] {
  return [
    ...checkProjects(config),
    ...checkKeys(config, environment),
    ...checkWebhooks(config, environment),
    ...checkConnections(config, environment),
    ...checkModels(config),
    ...checkEndpoints(config),
    ...checkResourceDefaults(config),
    ...checkListen(config),
    ...checkObjects(config),
    ...legacyResourcePriceProblems(config),
  ];
}

/** Node refuses a headers timeout longer than the whole-request timeout. */
function checkListen(config: Config): string[] {
  const { headers_ms, request_ms } = config.listen.timeouts;
  return headers_ms > request_ms ? ['/listen/timeouts/headers_ms: must not exceed request_ms'] : [];
}

/** The placeholder a connection's base_url may start with: the in-process simulator's URL. */
export const SIMULATOR_PLACEHOLDER = '${simulator}';

/** The configuration with `${simulator}` replaced by the running simulator's URL. */
export function withSimulatorUrl(config: Config, simulatorUrl: string): Config {
  return {
    ...config,
    connections: config.connections.map((connection) => ({
      ...connection,
      base_url: connection.base_url.replace(SIMULATOR_PLACEHOLDER, simulatorUrl),
    })),
  };
}

function checkObjects(config: Config): string[] {
  const { kind, s3 } = config.objects;
  const problems: string[] = [];
  if (kind === 's3' && !s3) problems.push('/objects/s3: required when objects.kind is s3');
  config.connections.forEach((connection, index) => {
    if (connection.base_url.startsWith(SIMULATOR_PLACEHOLDER) && !config.simulator?.enabled)
      problems.push(`/connections/${index}/base_url: ${SIMULATOR_PLACEHOLDER} needs simulator.enabled: true`);
  });
  if (s3 && (s3.access_key_id_env === undefined) !== (s3.secret_access_key_env === undefined))
    problems.push('/objects/s3: set both access_key_id_env and secret_access_key_env, or neither');
  const sealing = config.objects.sealing_key_env ?? config.objects.sealing_key_file;
  config.projects.forEach((project, index) => {
    if (project.capture?.enabled && sealing === undefined)
      problems.push(
        `/projects/${index}/capture/enabled: body capture keeps sealed objects; set objects.sealing_key_env to an environment variable holding a 32-byte key`,
      );
  });
  return problems;
}

function duplicates(values: string[]): string[] {
  return values.filter((value, index) => values.indexOf(value) !== index);
}

function checkProjects(config: Config): string[] {
  const problems: string[] = [];
  for (const id of duplicates(config.projects.map((project) => project.id)))
    problems.push(`/projects: duplicate project id "${id}"`);
  config.projects.forEach((project, index) => {
    const at = `/projects/${index}`;
    if (project.runs.default_budget_micros_usd > project.runs.max_budget_micros_usd) {
      problems.push(`${at}/runs/default_budget_micros_usd: must not exceed max_budget_micros_usd`);
    }
    if (project.runs.default_ttl_seconds > project.runs.max_ttl_seconds) {
      problems.push(`${at}/runs/default_ttl_seconds: must not exceed max_ttl_seconds`);
    }
    for (const id of duplicates(project.outcome_definitions.map((definition) => definition.id))) {
      problems.push(`${at}/outcome_definitions: duplicate definition id "${id}"`);
    }
    project.outcome_definitions.forEach((definition, definitionIndex) => {
      const where = `${at}/outcome_definitions/${definitionIndex}`;
      if (definition.kind === 'CATEGORICAL' && !definition.allowed_values) {
        problems.push(`${where}/allowed_values: required for kind CATEGORICAL`);
      }
      if (definition.kind === 'BOOLEAN' && definition.allowed_values) {
        problems.push(
          `${where}/allowed_values: not allowed for kind BOOLEAN (its values are true and false)`,
        );
      }
    });
  });
  if (config.quickstart && !config.projects.some((project) => project.id === config.quickstart?.project)) {
    problems.push(`/quickstart/project: unknown project "${config.quickstart.project}"`);
  }
  return problems;
}

function checkKeys(config: Config, environment: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const projects = new Set(config.projects.map((project) => project.id));
  for (const id of duplicates(config.keys.map((key) => key.id)))
    problems.push(`/keys: duplicate key id "${id}"`);
  config.keys.forEach((key, index) => {
    if (!projects.has(key.project)) problems.push(`/keys/${index}/project: unknown project "${key.project}"`);
    const secret = environment[key.secret_env];
    if (secret === undefined || secret === '') {
      problems.push(`/keys/${index}/secret_env: environment variable ${key.secret_env} is not set`);
    } else if (!KEY_SECRET_PATTERN.test(secret)) {
      problems.push(
        `/keys/${index}/secret_env: ${key.secret_env} must hold gw_ followed by at least 32 letters, digits, _ or -`,
      );
    }
  });
  return problems;
}

/**
 * Configured webhook endpoints: ids unique across Projects, at most max_endpoints_per_project per
 * Project, a secret in the environment, and a URL that can be an endpoint's (the address rules are
 * applied at every delivery: webhooks/url-policy.ts).
 */
function checkWebhooks(config: Config, environment: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const ids = config.projects.flatMap((project) => project.webhooks.map((endpoint) => endpoint.id));
  for (const id of duplicates(ids)) problems.push(`/projects: duplicate webhook endpoint id "${id}"`);
  config.projects.forEach((project, projectIndex) => {
    if (project.webhooks.length > config.webhooks.max_endpoints_per_project)
      problems.push(
        `/projects/${projectIndex}/webhooks: more than webhooks.max_endpoints_per_project (${config.webhooks.max_endpoints_per_project}) endpoints`,
      );
    project.webhooks.forEach((endpoint, index) => {
      const at = `/projects/${projectIndex}/webhooks/${index}`;
      const secret = environment[endpoint.secret_env];
      if (secret === undefined || secret === '')
        problems.push(`${at}/secret_env: environment variable ${endpoint.secret_env} is not set`);
      else if (!WEBHOOK_SECRET_PATTERN.test(secret))
        problems.push(
          `${at}/secret_env: ${endpoint.secret_env} must hold whsec_ followed by at least 32 letters, digits, _ or -`,
        );
      let url: URL | undefined;
      try {
        url = new URL(endpoint.url);
      } catch {
        problems.push(`${at}/url: not an absolute URL`);
      }
      if (url && url.protocol !== 'http:' && url.protocol !== 'https:')
        problems.push(`${at}/url: must use http or https`);
      if (url && (url.username !== '' || url.password !== ''))
        problems.push(`${at}/url: must not contain a user name or password`);
      if (url && endpoint.url.includes('#')) problems.push(`${at}/url: must not contain a fragment`);
    });
  });
  return problems;
}

/** The environment variables an auth scheme needs, or a problem when a required field is missing. */
function authRequirements(auth: Config['connections'][number]['auth']): {
  names: string[];
  missing: string[];
} {
  const need = (fields: Array<keyof typeof auth>) =>
    fields.filter((field) => auth[field] === undefined).map(String);
  switch (auth.scheme) {
    case 'none':
      return { names: [], missing: [] };
    case 'x-api-key':
    case 'bearer':
      return { names: [auth.secret_env ?? ''], missing: need(['secret_env']) };
    case 'header':
      return { names: [auth.secret_env ?? ''], missing: need(['secret_env', 'header']) };
    case 'sigv4':
      return {
        names: [
          auth.access_key_id_env ?? '',
          auth.secret_access_key_env ?? '',
          ...(auth.session_token_env ? [auth.session_token_env] : []),
        ],
        missing: need(['service', 'region', 'access_key_id_env', 'secret_access_key_env']),
      };
    default: {
      const never: never = auth.scheme;
      return never;
    }
  }
}

function checkConnections(config: Config, environment: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const name of duplicates(config.connections.map((connection) => connection.name))) {
    problems.push(`/connections: duplicate connection name "${name}"`);
  }
  config.connections.forEach((connection, index) => {
    const at = `/connections/${index}`;
    const profile = findProfile(connection.profile);
    if (!profile)
      problems.push(`${at}/profile: unknown profile "${connection.profile}" (see docs/profiles.md)`);
    else if (profile.availability === 'withheld') {
      problems.push(`${at}/profile: profile "${connection.profile}" is withheld and cannot be created`);
    } else if (connection.beta_tokens.length > 0 && !profile.forwardsBeta) {
      problems.push(`${at}/beta_tokens: profile "${connection.profile}" never forwards vendora-beta`);
    }
    const auth = authRequirements(connection.auth);
    for (const field of auth.missing)
      problems.push(`${at}/auth/${field}: required for scheme ${connection.auth.scheme}`);
    for (const name of auth.names) {
      if (name && !environment[name]) problems.push(`${at}/auth: environment variable ${name} is not set`);
    }
  });
  return problems;
}

function checkModels(config: Config): string[] {
  const problems: string[] = [];
  const connections = new Map(config.connections.map((connection) => [connection.name, connection]));
  for (const alias of duplicates(config.models.map((model) => model.alias)))
    problems.push(`/models: duplicate alias "${alias}" (an alias means one thing on every endpoint)`);
  config.models.forEach((model, index) => {
    model.targets.forEach((target, targetIndex) => {
      const at = `/models/${index}/targets/${targetIndex}`;
      const connection = connections.get(target.connection);
      if (!connection) {
        problems.push(`${at}/connection: unknown connection "${target.connection}"`);
        return;
      }
      if (isMessagesModel(model)) return;
      const row = findProfile(connection.profile);
      if (row && !servesResource(row, model.endpoint)) {
        problems.push(
          `${at}/connection: connection "${connection.name}" (profile ${row.id}) does not serve ${model.endpoint}`,
        );
      }
    });
    if (!isMessagesModel(model)) problems.push(...mediaPriceProblems(model, `/models/${index}`));
  });
  return problems;
}

function checkEndpoints(config: Config): string[] {
  const problems: string[] = [];
  const connections = new Set(config.connections.map((connection) => connection.name));
  for (const [endpoint, connection] of Object.entries(config.endpoints.default_connections)) {
    if (!(EXPERIMENTAL_ENDPOINTS as readonly string[]).includes(endpoint)) {
      problems.push(
        `/endpoints/default_connections/${endpoint}: unknown endpoint (one of ${EXPERIMENTAL_ENDPOINTS.join(', ')})`,
      );
    }
    if (!connections.has(connection)) {
      problems.push(`/endpoints/default_connections/${endpoint}: unknown connection "${connection}"`);
    }
  }
  return problems;
}

/**
 * A default connection of a resource endpoint must serve it. Media endpoints and /v1/responses take
 * their connection from the model alias (Svc-Route still pins one of its connections), so a default
 * there would do nothing and is refused.
 */
function checkResourceDefaults(config: Config): string[] {
  const problems: string[] = [];
  for (const [endpoint, name] of Object.entries(config.endpoints.default_connections)) {
    const at = `/endpoints/default_connections/${endpoint}`;
    if ((MEDIA_ENDPOINTS as readonly string[]).includes(endpoint)) {
      problems.push(
        `${at}: not used: the model alias of a ${endpoint} request names its connection (add a media alias under models; Svc-Route pins one of its connections). Remove this line.`,
      );
      continue;
    }
    if (endpoint === 'responses') {
      problems.push(
        `${at}: not used: POST /v1/responses is served by its model alias's first target, whatever its wire (Svc-Route pins one of the alias's connections). Remove this line.`,
      );
      continue;
    }
    if (endpoint !== 'files') continue;
    const connection = config.connections.find((candidate) => candidate.name === name);
    const row = connection ? findProfile(connection.profile) : undefined;
    if (row && !servesResource(row, 'files')) {
      problems.push(`${at}: connection "${name}" (profile ${row.id}) does not serve files`);
    }
  }
  return problems;
}
