/**
 * A LangGraph `BaseStore` on SQLite (the checkpoint-sqlite package ships a saver only). Durable
 * key-value items in namespaces, with prefix search and exact/comparison filters; no vector index
 * (a `query` is ignored, as the in-memory store does without an index).
 */
import Database from "better-sqlite3";
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from "@langchain/langgraph";

const SEP = "\u001f";

interface Row {
  namespace: string;
  key: string;
  value: string;
  created_at: number;
  updated_at: number;
}

const toItem = (r: Row): Item => ({
  namespace: r.namespace.split(SEP),
  key: r.key,
  value: JSON.parse(r.value) as Record<string, unknown>,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

function matches(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  for (const [k, cond] of Object.entries(filter ?? {})) {
    const v = value[k];
    if (cond && typeof cond === "object" && !Array.isArray(cond)) {
      for (const [op, want] of Object.entries(cond as Record<string, unknown>)) {
        const ok =
          op === "$eq"
            ? v === want
            : op === "$ne"
              ? v !== want
              : op === "$gt"
                ? (v as number) > (want as number)
                : op === "$gte"
                  ? (v as number) >= (want as number)
                  : op === "$lt"
                    ? (v as number) < (want as number)
                    : op === "$lte"
                      ? (v as number) <= (want as number)
                      : JSON.stringify(v) === JSON.stringify(cond);
        if (!ok) return false;
      }
    } else if (JSON.stringify(v) !== JSON.stringify(cond)) return false;
  }
  return true;
}

export class SqliteStore extends BaseStore {
  private readonly db: Database.Database;
  /** The statements every get and put runs, prepared once (an analysis reads thousands of items). */
  private readonly stmt: Record<"get" | "del" | "put", Database.Statement>;

  constructor(path: string) {
    super();
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("busy_timeout = 5000");
    this.db.exec(`CREATE TABLE IF NOT EXISTS keel_store (
      namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY (namespace, key))`);
    this.stmt = {
      get: this.db.prepare("SELECT * FROM keel_store WHERE namespace = ? AND key = ?"),
      del: this.db.prepare("DELETE FROM keel_store WHERE namespace = ? AND key = ?"),
      put: this.db.prepare(
        `INSERT INTO keel_store (namespace, key, value, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ),
    };
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- better-sqlite3 is synchronous; the interface is async.
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results = this.db.transaction(() => operations.map((op) => this.run(op)))();
    return results as OperationResults<Op>;
  }

  private run(op: Operation): unknown {
    if ("key" in op && !("value" in op)) return this.getOne(op);
    if ("value" in op) return this.putOne(op);
    if ("namespacePrefix" in op) return this.searchRows(op);
    return this.namespacesOf(op);
  }

  private getOne(op: GetOperation): Item | null {
    const row = this.stmt.get.get(op.namespace.join(SEP), op.key) as Row | undefined;
    return row ? toItem(row) : null;
  }

  private putOne(op: PutOperation): void {
    const ns = op.namespace.join(SEP);
    if (op.value === null) {
      this.stmt.del.run(ns, op.key);
      return;
    }
    const now = Date.now();
    this.stmt.put.run(ns, op.key, JSON.stringify(op.value), now, now);
  }

  private rowsUnder(prefix: string[]): Row[] {
    if (prefix.length === 0)
      return this.db.prepare("SELECT * FROM keel_store ORDER BY updated_at DESC").all() as Row[];
    const ns = prefix.join(SEP);
    return this.db
      .prepare(
        "SELECT * FROM keel_store WHERE namespace = ? OR substr(namespace, 1, ?) = ? ORDER BY updated_at DESC",
      )
      .all(ns, ns.length + 1, ns + SEP) as Row[];
  }

  private searchRows(op: SearchOperation): Item[] {
    const items = this.rowsUnder(op.namespacePrefix)
      .map(toItem)
      .filter((i) => matches(i.value, op.filter));
    const offset = op.offset ?? 0;
    return items.slice(offset, offset + (op.limit ?? 10));
  }

  private namespacesOf(op: ListNamespacesOperation): string[][] {
    const all = (
      this.db.prepare("SELECT DISTINCT namespace FROM keel_store").all() as Array<{
        namespace: string;
      }>
    ).map((r) => r.namespace.split(SEP));
    const fits = (ns: string[]) =>
      (op.matchConditions ?? []).every((c) => {
        const path = c.path;
        const part = c.matchType === "prefix" ? ns.slice(0, path.length) : ns.slice(-path.length);
        return part.length === path.length && path.every((p, i) => p === "*" || p === part[i]);
      });
    const seen = new Map<string, string[]>();
    for (const ns of all.filter(fits)) {
      const cut = op.maxDepth ? ns.slice(0, op.maxDepth) : ns;
      seen.set(cut.join(SEP), cut);
    }
    return [...seen.values()]
      .sort((a, b) => a.join("/").localeCompare(b.join("/")))
      .slice(op.offset, op.offset + op.limit);
  }

  /** Closes the database file. */
  close(): void {
    if (this.db.open) this.db.close();
  }
}
