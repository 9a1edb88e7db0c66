/**
 * On a real llama-server and a real Ollama with a 4,096-token context, no reply of a keel run runs
 * to the end of the context: every request's generation budget is at most what the window leaves
 * after its prompt (a long request leaves little). Measured before: 6 of 10 act replies of a real
 * llama-server at -c 4096 ran to the context's end with the 8,192-token act budget. The model is the random tiny-qwen2 (it
 * rambles on every reply, and fast): keel's own budgets are sent, no cap of the server's.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOllama } from "../../src/testing/fake-ollama/index.js";
import { call, calls, keelScript } from "../../src/testing/script.js";
import { runKeel } from "../support/cli.js";
import { realServers, REAL, type Exchange, type RealServer } from "./support.js";

const CONTEXT = 4096;

/** What the server counted of a streamed answer (the prompt and the reply), in either dialect. */
function counted(kind: RealServer["kind"], e: Exchange): { prompt: number; reply: number } {
  const lines = e.answer.split("\n").filter((l) => l.trim());
  if (kind === "ollama") {
    const done = JSON.parse(lines.at(-1)!) as { prompt_eval_count?: number; eval_count?: number };
    return { prompt: done.prompt_eval_count ?? 0, reply: done.eval_count ?? 0 };
  }
  const usage = lines
    .filter((l) => l.startsWith("data: {"))
    .map(
      (l) =>
        JSON.parse(l.slice(6)) as {
          usage?: { prompt_tokens?: number; completion_tokens?: number };
        },
    )
    .find((c) => c.usage)?.usage;
  return { prompt: usage?.prompt_tokens ?? 0, reply: usage?.completion_tokens ?? 0 };
}

/**
 * A settings home whose plan and summary budgets are small: the act turns are the ones whose room
 * the window decides, and a random model fills every budget it gets, at a few tokens a second on
 * a loaded CPU.
 */
function shortOtherCalls(): string {
  const home = mkdtempSync(path.join(tmpdir(), "keel-real-fit-home-"));
  mkdirSync(path.join(home, "keel"));
  writeFileSync(
    path.join(home, "keel", "settings.json"),
    JSON.stringify({ generationBudget: { plan: 128, summary: 128 } }),
  );
  return home;
}

/** The generation budget a request carried. */
const budgetOf = (kind: RealServer["kind"], e: Exchange) =>
  Number(
    kind === "ollama"
      ? (e.body?.options as { num_predict?: number } | undefined)?.num_predict
      : e.body?.max_tokens,
  );

/** The request of the real case: long, so each reply is left a few hundred tokens of the window. */
function longRequest(ws: string, flags: string[]): string[] {
  const notes = Array.from(
    { length: 75 },
    (_, i) => `Note ${i}: the tide at pier ${i % 9} rose ${(i * 7) % 31} cm on day ${i % 28}.`,
  ).join("\n");
  return [
    "run",
    `Create notes.txt summarising these notes in three lines:\n${notes}`,
    "-w",
    ws,
    ...flags,
    "--checkpoints",
    "memory",
    "--context-window",
    String(CONTEXT),
    "--max-turns",
    "1",
    "--retries",
    "0",
    "--json",
  ];
}

// The same run against keel's fake Ollama (held to the real one by test/contract/), with or
// without real servers on the machine: each request's budget against the prompt the fake counted.
describe(`budgets that fit on keel's fake Ollama at a ${CONTEXT}-token context`, () => {
  it("each budget is at most what the window leaves after the prompt the server counted", async () => {
    const fake = await startFakeOllama({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "notes.txt", content: "one\ntwo\nthree\n" }))
          : { content: "Wrote notes.txt." },
      ),
    });
    try {
      const ws = mkdtempSync(path.join(tmpdir(), "keel-fake-fit-"));
      const r = await runKeel(longRequest(ws, ["--ollama-url", fake.url]), {
        env: { XDG_CONFIG_HOME: shortOtherCalls() },
      });
      expect(r.stderr).not.toMatch(/unexpected failure/);
      const chats = fake.chatBodies();
      expect(chats.length).toBeGreaterThanOrEqual(2);
      expect(fake.prefill).toHaveLength(chats.length);
      expect(readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("one\ntwo\nthree\n");
      chats.forEach((body, i) => {
        const prompt = fake.prefill[i]!.promptTokens;
        expect(prompt).toBeGreaterThan(1000);
        expect(Number(body.options?.num_predict)).toBeLessThanOrEqual(CONTEXT - prompt);
      });
    } finally {
      await fake.close();
    }
  }, 120_000);
});

for (const real of REAL.ggufs["tiny-qwen2"] ? realServers() : []) {
  describe(`budgets that fit on a real ${real.kind} at a ${CONTEXT}-token context`, () => {
    let server: RealServer;
    beforeAll(async () => {
      server = await real.start({ context: CONTEXT, model: "tiny-qwen2" });
    }, 120_000);
    afterAll(async () => server?.close(), 60_000);

    it("no reply runs to the end of the context: each budget is what the window leaves after the prompt", async () => {
      const ws = mkdtempSync(path.join(tmpdir(), "keel-real-fit-"));
      // A long request leaves each reply a few hundred tokens of the window: the random model
      // fills what it is given, and this keeps the test to minutes on a loaded CPU.
      const r = await runKeel(longRequest(ws, server.flags), {
        env: { XDG_CONFIG_HOME: shortOtherCalls() },
      });
      expect(r.stderr).not.toMatch(/unexpected failure/);
      const answered = server.chats().filter((e) => e.status === 200);
      expect(answered.length).toBeGreaterThanOrEqual(2);
      for (const e of answered) {
        const c = counted(server.kind, e);
        expect(c.prompt).toBeGreaterThan(0);
        // what the server counted of prompt and reply stays inside the window
        expect(c.prompt + c.reply).toBeLessThan(CONTEXT);
        expect(budgetOf(server.kind, e)).toBeLessThanOrEqual(CONTEXT - c.prompt);
      }
      // the act turns were cut by their budget, not by the context: the random model rambles on
      expect(answered.some((e) => counted(server.kind, e).reply === budgetOf(server.kind, e))).toBe(
        true,
      );
      // a random model fills every budget at a few tokens a second on a shared 2-core CPU: the
      // Ollama run took 578 s of this at a load average of 12-16
    }, 900_000);
  });
}
