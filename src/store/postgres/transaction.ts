/** The transaction runner a PostgreSQL sub-repository receives from PostgresStore (one connection, READ COMMITTED). */
import type pg from 'pg';

export type PgTransaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;
