/**
 * The keyset page queries of GET /v1/files and GET /v1/batches, built once for both adapters (they
 * differ only in how a parameter is written: `?` or `$n`). A page is the rows of one Project after
 * the cursor in (created_at, id) order, served by the (project_id, created_at, id) indexes of
 * migration 10; the caller reads limit + 1 rows to learn whether more follow.
 */
import type { BatchListQuery } from './batches-port.js';
import type { FileListQuery } from './files-port.js';

export interface PageSql {
  sql: string;
  params: unknown[];
}

type Placeholder = (position: number) => string;

function builder(placeholder: Placeholder) {
  const params: unknown[] = [];
  return {
    params,
    bind(value: unknown): string {
      params.push(value);
      return placeholder(params.length);
    },
  };
}

export function fileListSql(projectId: string, query: FileListQuery, placeholder: Placeholder): PageSql {
  const { params, bind } = builder(placeholder);
  const where = [`project_id = ${bind(projectId)}`, `expires_at > ${bind(query.nowIso)}`];
  if (query.purpose !== undefined) where.push(`purpose = ${bind(query.purpose)}`);
  const [compare, direction] = query.order === 'asc' ? ['>', 'ASC'] : ['<', 'DESC'];
  if (query.after)
    where.push(`(created_at, id) ${compare} (${bind(query.after.createdAt)}, ${bind(query.after.id)})`);
  const sql = `SELECT * FROM files WHERE ${where.join(' AND ')} ORDER BY created_at ${direction}, id ${direction} LIMIT ${bind(query.limit)}`;
  return { sql, params };
}

export function batchListSql(projectId: string, query: BatchListQuery, placeholder: Placeholder): PageSql {
  const { params, bind } = builder(placeholder);
  const where = [`project_id = ${bind(projectId)}`, `delete_after > ${bind(query.now)}`];
  if (query.after) where.push(`(created_at, id) < (${bind(query.after.createdAt)}, ${bind(query.after.id)})`);
  const sql = `SELECT record FROM batches WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT ${bind(query.limit)}`;
  return { sql, params };
}
