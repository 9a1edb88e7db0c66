/**
 * A scripted weak model hits each failure kind; the run ends done after the ladder's hint, or ends
 * with a report at the exact strike the ladder defines. Guard state survives a resume.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { PLAN_NOTE_HEADER } from "../../src/coder/turn/setup.js";
import { describe, expect, it } from "vitest";
import { ModelServerError } from "../../src/models/errors.js";
import type { ChatBody, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import {
  call,
  calls,
  expandBraces,
  keelScript,
  lastMessage,
  lastResult,
  runCoder,
  fakeOllamaPerTest,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

/** keel's notes to the model in a request, without the plan (a note of its own). */
const keelNotes = (b: ChatBody | undefined) =>
  (b?.messages ?? [])
    .filter((m) => m.role === "user" && m.content.startsWith("[keel]"))
    .map((m) => m.content)
    .filter((c) => !c.startsWith(PLAN_NOTE_HEADER));

describe("each failure kind gets its hint, and the model recovers", () => {
  it("unknown tools three times → a hint naming them → done", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn < 3)
          return {
            ...calls(call(`makeEndpoint${req.turn}`, { route: "/users" })),
            allowUnknownTools: true,
          };
        if (req.turn === 3)
          return calls(call("write_file", { path: "users.js", content: "export {}" }));
        return { content: "Done." };
      }),
    });
    const { state } = await runCoder(fake, "Create users.js", { workspace: tempWorkspace() });
    const hint = lastMessage(fake.chatBodies({ turnsOnly: true })[3])!.content;
    expect(hint).toMatch(
      /^\[keel\] You called tools that do not exist: 3 tool calls in a row failed: makeEndpoint0 \(unknown_tool\)/,
    );
    expect(state.strikes).toEqual({ unknown_tool: 1 });
    expect(state.status).toBe("done");
  });

  it("invalid arguments three times → a hint about types → done", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn < 3) return calls(call("read_file", { path: ["a", "b"] }));
        return { content: "I could not read it." };
      }),
    });
    const { state } = await runCoder(fake, "Explain a.txt", { workspace: tempWorkspace() });
    expect(lastMessage(fake.chatBodies({ turnsOnly: true })[3])!.content).toMatch(
      /^\[keel\] Your tool calls had invalid arguments/,
    );
    expect(state.strikes).toEqual({ invalid_arguments: 1 });
    expect(state.status).toBe("done");
  });

  it("a reply repeating itself → a hint → a real answer", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content: "Let me look at the code. Let me look at the code. Let me look at the code.",
            }
          : { content: "The project has one module." },
      ),
    });
    const { state } = await runCoder(fake, "Explain this project", { workspace: tempWorkspace() });
    expect(lastMessage(fake.chatBodies({ turnsOnly: true })[1])!.content).toMatch(
      /^\[keel\] You are repeating yourself: the same sentence 3 times/,
    );
    expect(state.summary).toBe("The project has one module.");
  });

  it("prose instead of action on a build → a hint → the file is written", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return { content: "You should create app.py with a main function." };
        if (req.turn === 1)
          return calls(call("write_file", { path: "app.py", content: "def main(): pass\n" }));
        return { content: "Created app.py." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create app.py with a main function", { workspace: ws });
    expect(keelNotes(fake.chatBodies({ turnsOnly: true })[1])[0]).toMatch(
      /You described what to do but did not do it/,
    );
    expect(readFileSync(path.join(ws, "app.py"), "utf8")).toBe("def main(): pass\n");
    expect(state.status).toBe("done");
  });

  it("prose is the answer for analysis: no nudge", async () => {
    fake = await startFake({ script: keelScript(() => ({ content: "It is a small CLI." })) });
    const { state } = await runCoder(fake, "Explain what this repo is", {
      workspace: tempWorkspace(),
    });
    expect(fake.chatBodies({ turnsOnly: true })).toHaveLength(1);
    expect(state.status).toBe("done");
  });
});

describe("loop detectors in a run", () => {
  it("an A-B cycle is cut at its sixth call with a cycle hint", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (lastResult(req).includes("loop detected"))
          return { content: "a.txt and b.txt both say hi." };
        return calls(call("read_file", { path: req.turn % 2 === 0 ? "a.txt" : "b.txt" }));
      }),
    });
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "a.txt"), "hi");
    writeFileSync(path.join(ws, "b.txt"), "hi too");
    const { state } = await runCoder(fake, "Explain a.txt and b.txt", {
      workspace: ws,
      context: { loopNoProgress: 10 },
    });
    expect(state.trail.map((t) => t.kind ?? "ok")).toEqual(["ok", "ok", "ok", "ok", "ok", "loop"]);
    expect(toolMessages(fake.chatBodies({ turnsOnly: true })[6]).at(-1)!.content).toMatch(
      /went round the same cycle 3 times/,
    );
    expect(state.status).toBe("done");
  });

  it("a command polled for a changing result is never cut", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (lastResult(req).includes("count 5")) return { content: "The counter reached 5." };
        return calls(
          call("run_command", {
            command: `node -e "const f='n.txt';const fs=require('fs');const n=(+fs.readFileSync(f,'utf8')||0)+1;fs.writeFileSync(f,String(n));console.log('count '+n)"`,
          }),
        );
      }),
    });
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "n.txt"), "0");
    const { state } = await runCoder(fake, "Run the counter until it reaches 5", { workspace: ws });
    expect(state.trail.map((t) => t.ok)).toEqual([true, true, true, true, true]);
    expect(state.status).toBe("done");
  });

  it("the same failing command with the same output is cut at the third", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        lastResult(req).includes("loop detected")
          ? { content: "The test keeps failing: assertion in a.test.js." }
          : calls(
              call("run_command", {
                command: "node -e \"console.log('1 failing'); process.exit(1)\"",
              }),
            ),
      ),
    });
    const { state } = await runCoder(fake, "Run the tests", {
      workspace: tempWorkspace(),
      context: { errorStreak: 10 },
    });
    expect(state.trail.map((t) => t.kind)).toEqual(["failed", "failed", "loop"]);
  });
});

describe("the ladder's thresholds come from the context", () => {
  it("two hints and no re-plan: the summary turn comes at the third strike, then the end", async () => {
    fake = await startFake({ script: keelScript(() => ({ content: "" })) });
    const { state } = await runCoder(fake, "Create a.txt", {
      workspace: tempWorkspace(),
      context: { recoveryHints: 2, recoveryReplans: 0 },
    });
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns).toHaveLength(4);
    expect(turns[3]!.tools).toBeUndefined();
    expect(
      fake.chatBodies().filter((b) => JSON.stringify(b.format ?? "").includes("steps")),
    ).toHaveLength(1);
    expect(state.strikes.empty).toBe(3);
    expect(state.status).toBe("gave_up");
  });
});

describe("guard state survives a resume", () => {
  it("a run that dies in the middle of a loop escalates at the same call after resuming", async () => {
    fake = await startFake({
      script: keelScript(() => calls(call("list_dir", { path: "." }))),
    });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    // Die (model server down, no retries) on the model turn after the first loop hit.
    fake.onChat((req) => {
      if (!req.structured && req.turn === 3 && !resumed)
        fake!.inject({
          fault: "status",
          status: 503,
          error: "server busy, please try again.  maximum pending requests exceeded",
        });
    });
    let resumed = false;
    const died = await runCoder(fake, "Analyze the folder", {
      workspace: ws,
      checkpointer,
      threadId: "loop",
      context: { retries: 0 },
    }).catch((e: unknown) => e);
    expect(died).toBeInstanceOf(ModelServerError);
    const mid = await checkpointer.get({ configurable: { thread_id: "loop" } });
    expect(mid).toBeDefined();
    resumed = true;
    const { state } = await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      threadId: "loop",
      context: { retries: 0 },
    });
    expect(state.trail.map((t) => t.kind ?? "ok")).toEqual(["ok", "ok", "loop", "loop", "loop"]);
    expect(Object.values(state.loopHits)).toEqual([3]);
    expect(state.status).toBe("gave_up");
  });
});

describe("context budget", () => {
  it("keeps every request inside num_ctx while a long task completes", async () => {
    const files = Array.from({ length: 12 }, (_, i) => `notes/n${i}.md`);
    fake = await startFake({
      // Keyed on what the conversation mentions, not on turn numbers: compaction folds old turns.
      script: keelScript((req) => {
        const seen = expandBraces(JSON.stringify(req.messages));
        const next = files.find((f) => !seen.includes(f));
        if (next) return calls(call("read_file", { path: next }));
        if (!seen.includes("summary.md ("))
          return calls(call("write_file", { path: "summary.md", content: "All notes read." }));
        return { content: "Wrote summary.md." };
      }),
    });
    const ws = tempWorkspace();
    for (const f of files) {
      const p = path.join(ws, f);
      await import("node:fs/promises").then((fs) => fs.mkdir(path.dirname(p), { recursive: true }));
      writeFileSync(p, `# ${f}\n${"lorem ipsum dolor sit amet ".repeat(150)}`);
    }
    const { state } = await runCoder(fake, "Read every note in notes/ and write summary.md", {
      workspace: ws,
      context: { contextWindow: 4096 },
    });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "summary.md"), "utf8")).toBe("All notes read.");
    const turns = fake.chatBodies({ turnsOnly: true });
    for (const body of turns) {
      expect(body.options?.num_ctx).toBe(4096);
      const chars =
        body.messages!.reduce(
          (a, m) => a + m.content.length + JSON.stringify(m.tool_calls ?? "").length,
          0,
        ) + JSON.stringify(body.tools ?? []).length;
      expect(chars / 3.5).toBeLessThanOrEqual(4096);
    }
    const compacted = turns.filter((b) =>
      b.messages!.some((m) => m.content.startsWith("[keel] Earlier turns were compacted")),
    );
    expect(compacted.length).toBeGreaterThan(0);
    // the request and the system prompt are always intact
    for (const body of turns) {
      expect(body.messages![0]!.role).toBe("system");
      expect(body.messages!.find((m) => m.role === "user")!.content).toBe(
        "Read every note in notes/ and write summary.md",
      );
    }
  });
});
