/**
 * keel's SQLite checkpointer: like LangGraph's Postgres saver, a checkpoint row holds no channel
 * values, only their versions; a channel's value is stored once per version, when `put` is told it
 * changed (`newVersions`). A turn therefore writes what it changed, not every channel again, and a
 * checkpoint is read by key (its row, the values its versions name, its pending writes).
 *
 * The ancestor walk that rebuilds LangGraph's delta channels (`getDeltaChannelHistory`) is one
 * recursive query, instead of one `getTuple` per ancestor.
 *
 * Tables are keel's own (`keel_checkpoints`, `keel_blobs`, `keel_writes`); a file written by
 * LangGraph's SqliteSaver (tables `checkpoints` and `writes`) is copied into them on first open,
 * and its own tables are left as they were.
 */
import Database from "better-sqlite3";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  compareWritesSortKeys,
  maxChannelVersion,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { assembleHistory, type DeltaHistories } from "./delta-history.js";
import { KeelSerializer } from "./serde.js";
import { migrateLegacy } from "./sqlite-legacy.js";
import { SCHEMA, statements, type CheckpointRow, type Statements } from "./sqlite-saver-sql.js";

/**
 * `PRAGMA application_id` of a file that holds keel's tables (`SCHEMA`, in WAL mode) and a
 * checkpoint in them, so that no legacy thread is left to copy (`migrateLegacy`): "kee" and the
 * schema's number. A change to `SCHEMA` takes the next number, and `setup` makes the change for a
 * file with another id. (2: the tables are `WITHOUT ROWID`; a file made before keeps its rowid
 * tables, which the same statements read and write.)
 */
const SET_UP = 0x6b656502;

/** The parts of a checkpoint stored in its row: everything but the channel values. */
type Skeleton = Omit<Checkpoint, "channel_values">;

/**
 * A skeleton as stored: without its `id`, which the row's key holds (a checkpoint stored before
 * has it in both).
 */
type StoredSkeleton = Omit<Skeleton, "id"> & { id?: string };

export class KeelSqliteSaver extends BaseCheckpointSaver {
  readonly db: Database.Database;
  /** Bytes of checkpoint rows, channel values and writes this saver stored (the bench's and the growth test's measure). */
  bytesWritten = 0;
  private statements?: Statements;
  /** Whether this saver has written `SET_UP` into the file's header. */
  private marked = false;

  constructor(file: string, serde: SerializerProtocol = new KeelSerializer()) {
    super(serde);
    this.db = new Database(file);
  }

  /**
   * Creates the tables (and copies a LangGraph SqliteSaver's threads in) on first use; a file keel
   * has written a checkpoint to says so in its header (`SET_UP`), and opening it skips both.
   */
  private setup() {
    if (this.statements) return this.statements;
    if (this.db.pragma("application_id", { simple: true }) !== SET_UP) {
      this.db.pragma("journal_mode=WAL");
      this.db.exec(SCHEMA);
      migrateLegacy(this.db);
    }
    this.statements = statements(this.db);
    return this.statements;
  }

  /** Closes the database file. */
  close(): void {
    if (this.db.open) this.db.close();
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const s = this.setup();
    const {
      thread_id,
      checkpoint_ns = "",
      checkpoint_id,
    } = (config.configurable ?? {}) as {
      thread_id?: string;
      checkpoint_ns?: string;
      checkpoint_id?: string;
    };
    if (thread_id === undefined) return undefined;
    const params = { thread: thread_id, ns: checkpoint_ns, id: checkpoint_id ?? "" };
    const head = s.checkpoint(checkpoint_id !== undefined)(params);
    return head && this.tupleOf(thread_id, checkpoint_ns, head);
  }

  /** The tuple of a checkpoint row: its values and pending writes read by key. */
  private async tupleOf(thread: string, ns: string, head: CheckpointRow): Promise<CheckpointTuple> {
    const s = this.setup();
    const [id, parent, text, metaType, meta] = head;
    const stored = JSON.parse(text) as StoredSkeleton;
    const skeleton: Skeleton = { ...stored, id: stored.id ?? id };
    const params = { thread, ns, id, checkpoint: text };
    const channel_values: Record<string, unknown> = {};
    for (const [channel, type, data] of s.values()(params))
      if (type !== "empty") channel_values[channel] = await this.serde.loadsTyped(type, data);
    const writes: Array<{ key: ReturnType<typeof writesSortKey>; write: CheckpointPendingWrite }> =
      [];
    for (const [task, channel, path, idx, type, data] of s.writes()(params))
      writes.push({
        key: writesSortKey(path, task, idx),
        write: [task, channel, await this.serde.loadsTyped(type, data)],
      });
    writes.sort((x, y) => compareWritesSortKeys(x.key, y.key));
    if (skeleton.v < 4 && parent)
      await this.migrateSends(thread, ns, parent, skeleton, channel_values);
    const configOf = (checkpoint_id: string) => ({
      configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id },
    });
    return {
      config: configOf(id),
      checkpoint: { ...skeleton, channel_values },
      metadata: (await this.serde.loadsTyped(metaType, meta)) as CheckpointMetadata,
      ...(parent ? { parentConfig: configOf(parent) } : {}),
      pendingWrites: writes.map((w) => w.write),
    };
  }

  /** A checkpoint of format < 4 takes its parent's pending sends as its `__pregel_tasks` value. */
  private async migrateSends(
    thread: string,
    ns: string,
    parent: string,
    skeleton: Skeleton,
    values: Record<string, unknown>,
  ) {
    const sends = this.setup().sends().all(thread, ns, parent);
    values[TASKS] = await Promise.all(sends.map((r) => this.serde.loadsTyped(r.type, r.blob)));
    const versions = Object.values(skeleton.channel_versions);
    skeleton.channel_versions[TASKS] = versions.length
      ? maxChannelVersion(...versions)
      : this.getNextVersion(undefined);
  }

  async *list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    const s = this.setup();
    const { limit, before, filter } = options ?? {};
    const c = (config.configurable ?? {}) as { thread_id?: string; checkpoint_ns?: string };
    const where: string[] = [];
    const args: unknown[] = [];
    const when = (clause: string, ...values: unknown[]) => {
      where.push(clause);
      args.push(...values);
    };
    if (c.thread_id) when("thread_id = ?", c.thread_id);
    if (c.checkpoint_ns !== undefined && c.checkpoint_ns !== null)
      when("checkpoint_ns = ?", c.checkpoint_ns);
    const beforeId = (before?.configurable as { checkpoint_id?: string } | undefined)
      ?.checkpoint_id;
    if (beforeId !== undefined) when("checkpoint_id < ?", beforeId);
    for (const [key, value] of Object.entries(filter ?? {})) {
      if (value === undefined) continue;
      const clause = "json_extract(CAST(metadata AS TEXT), ?) IS json_extract(?, '$')";
      when(clause, `$."${key}"`, JSON.stringify(value));
    }
    const sql = `SELECT thread_id, checkpoint_ns, checkpoint_id FROM keel_checkpoints
      ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY checkpoint_id DESC
      ${limit ? `LIMIT ${Number.parseInt(String(limit), 10)}` : ""}`;
    const ids = this.db.prepare(sql).all(...args) as Array<{
      thread_id: string;
      checkpoint_ns: string;
      checkpoint_id: string;
    }>;
    for (const r of ids) {
      const head = s.checkpoint(true)({
        thread: r.thread_id,
        ns: r.checkpoint_ns,
        id: r.checkpoint_id,
      });
      if (head) yield await this.tupleOf(r.thread_id, r.checkpoint_ns, head);
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const s = this.setup();
    const c = config.configurable as
      { thread_id?: string; checkpoint_ns?: string; checkpoint_id?: string } | undefined;
    if (!c) throw new Error("Empty configuration supplied.");
    if (!c.thread_id) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const thread = c.thread_id;
    const ns = c.checkpoint_ns ?? "";
    const { channel_values: values, id: _id, ...rest } = checkpoint;
    const skeleton = JSON.stringify({
      ...rest,
      channel_versions: checkpoint.channel_versions ?? {},
    } satisfies StoredSkeleton);
    const blobs: unknown[][] = [];
    const stored: Record<string, string> = {};
    for (const [channel, version] of Object.entries(newVersions)) {
      if (!Object.prototype.hasOwnProperty.call(values ?? {}, channel)) continue;
      const [type, data] = await this.serde.dumpsTyped(values[channel]);
      blobs.push([thread, ns, channel, String(version), type, data]);
      stored[channel] = String(version);
      this.bytesWritten += data.length;
    }
    const storedJson = JSON.stringify(stored);
    const [type, meta] = await this.serde.dumpsTyped(metadata);
    this.bytesWritten += skeleton.length + meta.length + storedJson.length;
    this.db.transaction(() => {
      for (const b of blobs) s.putBlob().run(...b);
      s.putCheckpoint().run(
        thread,
        ns,
        checkpoint.id,
        c.checkpoint_id ?? null,
        skeleton,
        type,
        meta,
        storedJson,
      );
      if (!this.marked) {
        this.db.pragma(`application_id = ${SET_UP}`);
        this.marked = true;
      }
    })();
    return { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = "",
  ): Promise<void> {
    const s = this.setup();
    const c = config.configurable as
      { thread_id?: string; checkpoint_ns?: string; checkpoint_id?: string } | undefined;
    if (!c) throw new Error("Empty configuration supplied.");
    if (!c.thread_id) throw new Error("Missing thread_id field in config.configurable.");
    if (!c.checkpoint_id) throw new Error("Missing checkpoint_id field in config.configurable.");
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, data] = await this.serde.dumpsTyped(value);
        this.bytesWritten += data.length;
        const at = WRITES_IDX_MAP[channel] ?? idx;
        return [
          c.thread_id,
          c.checkpoint_ns ?? "",
          c.checkpoint_id,
          taskId,
          at,
          channel,
          type,
          data,
          taskPath,
        ];
      }),
    );
    const stmt = special ? s.replaceWrite() : s.insertWrite();
    this.db.transaction(() => {
      for (const r of rows) stmt.run(...r);
    })();
  }

  async deleteThread(threadId: string): Promise<void> {
    this.setup();
    this.db.transaction(() => {
      for (const table of ["keel_checkpoints", "keel_blobs", "keel_writes"])
        this.db.prepare(`DELETE FROM ${table} WHERE thread_id = ?`).run(threadId);
    })();
    return Promise.resolve();
  }

  /**
   * The writes and nearest stored value of each asked channel along the checkpoint's ancestors, in
   * one query (LangGraph's contract: see `BaseCheckpointSaver.getDeltaChannelHistory`).
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<DeltaHistories> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const s = this.setup();
    const c = (config.configurable ?? {}) as {
      thread_id?: string;
      checkpoint_ns?: string;
      checkpoint_id?: string;
    };
    const thread = c.thread_id ?? "";
    const ns = c.checkpoint_ns ?? "";
    const id =
      c.checkpoint_id ??
      ((await this.getTuple(config))?.config.configurable?.checkpoint_id as string | undefined);
    const rows =
      id === undefined ? [] : s.history({ thread, ns, id, channels: JSON.stringify(channels) });
    return assembleHistory(rows, channels, this.serde);
  }
}
