/** One statement on a PostgreSQL database, on a connection of its own (tests and benches). */
import pg from "pg";

export async function query<R>(url: string, sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as R[];
  } finally {
    await client.end();
  }
}
