/**
 * Threads written by LangGraph's SqliteSaver (keel's checkpointer before its own): copied once into
 * keel's tables when a file that has them is first opened by `KeelSqliteSaver`, so a workspace's
 * `.keel/keel.db` keeps its threads. The old tables are left untouched (an older keel still reads
 * them); nothing is copied again once keel's tables hold a checkpoint.
 */
import type Database from "better-sqlite3";

interface LegacyCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  type: string | null;
  checkpoint: Buffer;
  metadata: Buffer;
}

const hasTable = (db: Database.Database, name: string) =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !==
  undefined;

/**
 * Copies the SqliteSaver tables' checkpoints (each channel value stored once per version) and
 * writes into keel's; returns how many checkpoints were copied. A checkpoint that is not JSON is
 * an error naming it, and nothing is copied.
 */
export function migrateLegacy(db: Database.Database): number {
  if (!hasTable(db, "checkpoints") || !hasTable(db, "writes")) return 0;
  if (db.prepare("SELECT 1 FROM keel_checkpoints LIMIT 1").get() !== undefined) return 0;
  const rows = db.prepare("SELECT * FROM checkpoints").all() as LegacyCheckpoint[];
  if (rows.length === 0) return 0;
  const putCheckpoint = db.prepare(
    `INSERT OR IGNORE INTO keel_checkpoints
     (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, type, metadata, stored)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const putBlob = db.prepare(
    `INSERT OR IGNORE INTO keel_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
     VALUES (?, ?, ?, ?, 'json', ?)`,
  );
  db.transaction(() => {
    for (const r of rows) {
      if ((r.type ?? "json") !== "json")
        throw new Error(
          `cannot read checkpoint ${r.checkpoint_id} of thread ${r.thread_id}: stored as ${r.type}, not JSON`,
        );
      // Raw JSON, not revived: each value is written back byte for byte as the serializer made it.
      const { channel_values: values = {}, ...skeleton } = JSON.parse(
        r.checkpoint.toString("utf8"),
      ) as {
        channel_values?: Record<string, unknown>;
        channel_versions?: Record<string, string | number>;
      };
      const versions = skeleton.channel_versions ?? {};
      const stored: Record<string, string> = {};
      for (const [channel, value] of Object.entries(values)) {
        const version = versions[channel];
        if (version === undefined) continue;
        stored[channel] = String(version);
        putBlob.run(r.thread_id, r.checkpoint_ns, channel, stored[channel], JSON.stringify(value));
      }
      putCheckpoint.run(
        r.thread_id,
        r.checkpoint_ns,
        r.checkpoint_id,
        r.parent_checkpoint_id,
        JSON.stringify({ ...skeleton, channel_versions: versions }),
        r.type ?? "json",
        r.metadata,
        JSON.stringify(stored),
      );
    }
    db.exec(`INSERT OR IGNORE INTO keel_writes
      (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path)
      SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, coalesce(type, 'json'), value, ''
      FROM writes`);
  })();
  return rows.length;
}
