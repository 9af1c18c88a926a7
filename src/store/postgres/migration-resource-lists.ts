/**
 * PostgreSQL migration 10: GET /v1/files and GET /v1/batches page a Project's rows by (created_at, id)
 * (store/resource-lists.ts). Batches get a created_at column, filled from their records.
 */
export const POSTGRES_MIGRATION_RESOURCE_LISTS = {
  version: 10,
  name: 'resource lists',
  sql: `
ALTER TABLE batches ADD COLUMN created_at BIGINT;
UPDATE batches SET created_at = (record::jsonb ->> 'createdAt')::bigint;
ALTER TABLE batches ALTER COLUMN created_at SET NOT NULL;
CREATE INDEX batches_by_project_created ON batches(project_id, created_at, id);
CREATE INDEX files_by_project_created ON files(project_id, created_at, id);
`,
};
