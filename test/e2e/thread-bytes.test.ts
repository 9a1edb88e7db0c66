/**
 * What `keel run` stores per turn on a long thread that reads one small file a turn (issue 48):
 * the database grows by at most 6 KB a turn, and the saver stores at most 4 KB — as measured from
 * outside the running CLI, in its SQLite file, over turns 150–290 of a 300-turn thread. Bytes are
 * deterministic, so this is a test; the bench has the timings (bench/README.md).
 */
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runKeel } from "../support/cli.js";
import { call, calls, fakeOllamaPerTest, keelScript } from "../support/harness.js";
import { notesWorkspace } from "../support/long-thread.js";

const startFake = fakeOllamaPerTest();

const TURNS = 300;
const FROM = 150;
const TO = 290;

/** The database file's size (its pages, the WAL's committed ones included) and the bytes stored. */
function measure(file: string) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const one = (sql: string) => (db.prepare(sql).pluck().get() as number | null) ?? 0;
    const pages = one("PRAGMA page_count") * one("PRAGMA page_size");
    const stored =
      one("SELECT sum(length(blob)) FROM keel_writes") +
      one("SELECT sum(length(blob)) FROM keel_blobs") +
      one(
        "SELECT sum(length(checkpoint) + length(metadata) + length(stored)) FROM keel_checkpoints",
      );
    return { pages, stored };
  } finally {
    db.close();
  }
}

describe("a long reading thread of keel run", () => {
  it(
    "adds at most 6 KB a turn to its database, and stores at most 4 KB",
    { timeout: 600_000 },
    async () => {
      const ws = notesWorkspace(TURNS);
      const file = path.join(ws, "keel.db");
      const at: Record<number, ReturnType<typeof measure>> = {};
      let turn = 0;
      const fake = await startFake({
        script: keelScript(() => {
          const n = turn++;
          // Each model request comes after the turns before it are on disk (durability "sync").
          if (n === FROM || n === TO) at[n] = measure(file);
          return n < TURNS
            ? calls(call("read_file", { path: `notes/n${n}.txt` }))
            : { content: `Read ${TURNS} notes.` };
        }),
      });
      const r = await runKeel([
        "run",
        "hello, read the notes one by one",
        ...["-w", ws, "--ollama-url", fake.url, "--checkpoints", `sqlite:${file}`],
        ...["--max-turns", String(TURNS + 10), "--max-tool-calls", String(TURNS + 10), "--json"],
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ status: "done", turns: TURNS + 1 });
      const perTurn = (k: "pages" | "stored") => (at[TO]![k] - at[FROM]![k]) / (TO - FROM);
      expect(perTurn("pages")).toBeLessThanOrEqual(6 * 1024);
      expect(perTurn("stored")).toBeLessThanOrEqual(4 * 1024);
    },
  );
});
