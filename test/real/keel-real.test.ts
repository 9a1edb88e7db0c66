/**
 * keel end to end on real servers with a real small model (SmolLM2-135M-Instruct): the built
 * `keel run`, `keel analyze` and `keel eval` against llama-server and Ollama, each behind a
 * recorder (support.ts). A 135M model cannot be relied on to do a task, so what is asserted is what
 * keel owes any model: the protocol the server received (tools, tool results answering their calls
 * by id), no crash, nothing lost (the run is in the checkpoint store), every failure fed back,
 * a prompt over the server's context refused and named, and the server's real counts shown.
 *
 * The tests exist only where the real servers do (the installer's KEEL_LLAMA_SERVER, KEEL_OLLAMA
 * and KEEL_GGUF_SMOLLM2…); each server is started with a small context and a cap on its replies
 * (its own -n / num_predict) so a rambling model cannot take minutes.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EvalReport } from "../../src/eval/run.js";
import { startFakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { runKeel } from "../support/cli.js";
import { realServers, recorder, type Exchange, type RealServer } from "./support.js";

const CONTEXT = 4096;
const temp = (prefix: string) => mkdtempSync(path.join(tmpdir(), prefix));

/** The most tokens a reply may take, keel's budget for every call kind and the server's own cap. */
const REPLY_CAP = 160;

/**
 * A settings home that keeps every run short (keel eval takes no budget flags). keel sends its
 * generation budget with every request, which overrides the server's own cap (llama-server's
 * `-n`): without a small one here, SmolLM2 rambles to the end of a 1,024-token plan or an
 * 8,192-token act budget, minutes a reply on two cores.
 */
function shortRuns(): Record<string, string> {
  const home = temp("keel-real-home-");
  mkdirSync(path.join(home, "keel"));
  const budget = {
    classify: 64,
    plan: REPLY_CAP,
    act: REPLY_CAP,
    summary: REPLY_CAP,
    analyze: REPLY_CAP,
  };
  writeFileSync(
    path.join(home, "keel", "settings.json"),
    JSON.stringify({
      maxTurns: 3,
      maxToolCalls: 4,
      contextWindow: CONTEXT,
      retries: 0,
      generationBudget: budget,
    }),
  );
  return { XDG_CONFIG_HOME: home };
}

type Message = {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; function: { name: string } }>;
  tool_call_id?: string;
};
const messagesOf = (e: Exchange) => (e.body?.messages ?? []) as Message[];
const isStructured = (e: Exchange) =>
  e.body?.response_format !== undefined || (e.body?.format ?? "") !== "";

/** Every call the history shows is answered by a tool message carrying its id, in every request. */
function unansweredCalls(chats: Exchange[]): string[] {
  const missing: string[] = [];
  for (const [i, e] of chats.entries()) {
    const ms = messagesOf(e);
    const answered = new Set(ms.filter((m) => m.role === "tool").map((m) => m.tool_call_id));
    for (const m of ms)
      for (const c of m.tool_calls ?? [])
        if (!c.id || !answered.has(c.id))
          missing.push(`request ${i + 1}: ${c.function.name} ${c.id}`);
  }
  return missing;
}

/** The prompt tokens the server counted for each answered chat request, in order. */
function countedPrompts(kind: RealServer["kind"], chats: Exchange[]): number[] {
  return chats
    .filter((e) => e.status === 200 && !isStructured(e))
    .map((e) => {
      const lines = e.answer.split("\n").filter((l) => l.trim());
      if (kind === "ollama") {
        const done = JSON.parse(lines.at(-1)!) as { prompt_eval_count?: number };
        return done.prompt_eval_count ?? 0;
      }
      const usage = lines
        .filter((l) => l.startsWith("data: {"))
        .map((l) => JSON.parse(l.slice(6)) as { usage?: { prompt_tokens?: number } })
        .find((c) => c.usage)?.usage;
      return usage?.prompt_tokens ?? 0;
    });
}

const noCrash = (stderr: string) => {
  expect(stderr).not.toMatch(/unexpected failure/);
  expect(stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
};

describe("the recorder in front of a real server", () => {
  it("passes a stream through unchanged and keeps what the server received and answered", async () => {
    const fake = await startFakeOpenAI({ script: () => ({ content: "hello there" }) });
    const rec = await recorder(fake.url);
    try {
      const body = {
        model: "qwen2.5-coder-7b-instruct",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "hi" }],
      };
      const direct = await fetch(`${fake.baseUrl}/chat/completions`, {
        method: "POST",
        body: JSON.stringify(body),
      }).then((r) => r.text());
      const through = await fetch(`${rec.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify(body),
      }).then((r) => r.text());
      // the second request finds the first in the server's cache: usage and timings differ
      const shape = (t: string) =>
        t.replace(/"(id|created)":("[^"]*"|\d+)/g, "").replace(/"usage":.*$/gm, "");
      expect(shape(through)).toBe(shape(direct));
      expect(rec.exchanges).toHaveLength(1);
      expect(rec.exchanges[0]).toMatchObject({ path: "/v1/chat/completions", status: 200, body });
      expect(rec.exchanges[0]!.answer).toBe(through);
    } finally {
      await rec.close();
      await fake.close();
    }
  });
});

for (const real of realServers()) {
  describe(`keel on a real ${real.kind} with SmolLM2-135M`, () => {
    let server: RealServer;
    beforeAll(async () => {
      server = await real.start({ context: CONTEXT, maxReply: REPLY_CAP });
    }, 120_000);
    afterAll(async () => server?.close(), 60_000);

    it("keel run: keel's tools on the wire, every call answered by id, the real counts shown, the run kept", async () => {
      const ws = temp("keel-real-run-");
      writeFileSync(path.join(ws, "notes.txt"), "The answer is 42.\n");
      const db = path.join(temp("keel-real-db-"), "keel.db");
      const before = server.exchanges.length;
      const r = await runKeel(
        [
          "run",
          "Read notes.txt and tell me what it says.",
          "-w",
          ws,
          ...server.flags,
          "--checkpoints",
          `sqlite:${db}`,
          "--max-turns",
          "3",
          "--json",
        ],
        { env: shortRuns() },
      );
      noCrash(r.stderr);
      expect([0, 1], r.stderr).toContain(r.code);
      expect(r.json).toMatchObject({ status: expect.any(String), thread_id: expect.any(String) });
      const chats = server.chats().slice(0);
      const mine = chats.filter((e) => server.exchanges.indexOf(e) >= before);
      const turns = mine.filter((e) => !isStructured(e));
      expect(turns.length).toBeGreaterThan(0);
      // every model turn offered keel's tools (native channel) or carried them in the prompt, but
      // the tool-less summary turn keel forces at the end of a budget
      const summary = (e: Exchange) =>
        JSON.stringify(messagesOf(e).at(-1)).includes("being stopped");
      for (const e of turns.filter((t) => !summary(t))) {
        const names = ((e.body?.tools ?? []) as Array<{ function: { name: string } }>).map(
          (t) => t.function.name,
        );
        const system = JSON.stringify(messagesOf(e)[0]?.content ?? "");
        expect(names.includes("read_file") || system.includes("read_file")).toBe(true);
      }
      expect(unansweredCalls(mine)).toEqual([]);
      // the prompt counts keel shows are the server's own
      const shown = [...r.stderr.matchAll(/tokens: prompt ([\d,]+)/g)].map((m) =>
        Number(m[1]!.replace(/,/g, "")),
      );
      expect(shown.length).toBeGreaterThan(0);
      expect(countedPrompts(server.kind, mine)).toEqual(expect.arrayContaining(shown));
      // nothing lost: the run is in the checkpoint store, with the server's own prompt counts
      const stats = await runKeel([
        "stats",
        "--checkpoints",
        `sqlite:${db}`,
        "-t",
        String(r.json!.thread_id),
        "--json",
      ]);
      expect(stats.code, stats.stderr).toBe(0);
      const kept = JSON.parse(stats.stdout) as { runs?: number; promptTokens?: number };
      expect(JSON.stringify(kept)).toContain(String(shown.reduce((a, n) => a + n, 0)));
    }, 400_000);

    it("keel analyze: structured requests, a report on disk", async () => {
      const repo = temp("keel-real-analyze-");
      mkdirSync(path.join(repo, "src"));
      writeFileSync(path.join(repo, "src/add.js"), "export const add = (a, b) => a + b;\n");
      writeFileSync(
        path.join(repo, "src/main.js"),
        'import { add } from "./add.js";\nconsole.log(add(2, 3));\n',
      );
      const out = path.join(repo, "report.md");
      const before = server.exchanges.length;
      const r = await runKeel(
        [
          "analyze",
          repo,
          ...server.flags,
          "-o",
          out,
          "--checkpoints",
          "memory",
          "--context-window",
          String(CONTEXT),
          "--json",
        ],
        { env: shortRuns() },
      );
      noCrash(r.stderr);
      const mine = server.chats().filter((e) => server.exchanges.indexOf(e) >= before);
      expect(mine.length).toBeGreaterThan(0);
      expect(mine.every(isStructured)).toBe(true);
      if (r.code === 0) {
        expect(existsSync(out)).toBe(true);
        expect(readFileSync(out, "utf8")).toContain("src/add.js");
      } else {
        // SmolLM2 fills a JSON string until the server's reply cap: the cut reply is named (the
        // whole analysis stops on it today — see docs/real-model-time.md)
        expect(r.code, r.stderr).toBe(3);
        expect(String(r.json?.error)).toMatch(/length limit/);
        expect(r.json).toMatchObject({ status: "error", thread_id: expect.any(String) });
      }
    }, 240_000);

    it("keel eval, keel and a bare ReAct agent: a report with the server's prompt counts", async () => {
      const cwd = temp("keel-real-eval-");
      for (const agent of ["keel", "react"]) {
        const r = await runKeel(
          [
            "eval",
            ...server.flags,
            "-k",
            "1",
            "--task",
            "analyse-find",
            "--mode",
            "native",
            "--agent",
            agent,
            "--checkpoints",
            `sqlite:${path.join(cwd, "eval.db")}`,
            "--json",
          ],
          { cwd, env: shortRuns() },
        );
        noCrash(r.stderr);
        expect(r.code, r.stderr).toBe(0);
        const report = JSON.parse(r.stdout) as EvalReport;
        expect(report.agent).toBe(agent);
        expect(report.attempts).toHaveLength(1);
        // A bare agent's count comes from LangChain's usage_metadata, which ChatOllama left empty
        // on the real Ollama here (a gap of the peer runner, docs/real-model-time.md); keel's own
        // count is the server's on both.
        if (agent === "keel" || real.kind !== "ollama")
          expect(report.attempts[0]!.promptTokens).toBeGreaterThan(0);
        expect(report.attempts[0]!.seconds).toBeGreaterThan(0);
      }
    }, 300_000);

    it("a context too small for keel's own prompt: refused or cut by the server, named, no crash", async () => {
      // keel's smallest prompt (a chat request in prompt mode) is ~875 SmolLM2 tokens
      const small = await real.start({ context: 512, maxReply: 32 });
      try {
        const ws = temp("keel-real-small-");
        const r = await runKeel(
          [
            "run",
            "Say hello.",
            "-w",
            ws,
            ...small.flags,
            "--checkpoints",
            "memory",
            "--context-window",
            "1024",
            "--json",
          ],
          { env: shortRuns() },
        );
        noCrash(r.stderr);
        expect(r.code).toBe(3);
        expect(r.json).toMatchObject({ status: "error" });
        expect(String(r.json!.error)).toMatch(/context|truncat|num_ctx/i);
        // the server saw keel's prompt and said so (llama.cpp refuses; Ollama cuts and counts)
        expect(small.chats().length).toBeGreaterThan(0);
      } finally {
        await small.close();
      }
    }, 240_000);
  });
}
