/** Approvals and asking a human: LangGraph interrupts that a person answers with a Command. */
import { existsSync } from "node:fs";
import path from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import {
  call,
  calls,
  keelScript,
  lastResult,
  runCoder,
  fakeOllamaPerTest,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

// `kill -0` checks a process exists and changes nothing, but keel's policy asks before any kill.
const NEEDS_APPROVAL = "kill -0 $$ && touch approved.txt";
const approvalScript = keelScript((req) => {
  if (req.turn === 0) return calls(call("run_command", { command: NEEDS_APPROVAL }));
  return { content: `Result: ${lastResult(req).slice(0, 40)}` };
});

describe("approval of commands that reach beyond the workspace", () => {
  it("non-interactive without --yes: refused, and the model is told why", async () => {
    fake = await startFake({ script: approvalScript });
    const ws = tempWorkspace();
    await runCoder(fake, "Run the check", { workspace: ws });
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(false);
    expect(toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!.content).toMatch(
      /needs_approval.*kill acts beyond the workspace.*--yes/s,
    );
  });

  it("--yes (autoApprove) runs it", async () => {
    fake = await startFake({ script: approvalScript });
    const ws = tempWorkspace();
    await runCoder(fake, "Run the check", { workspace: ws, context: { autoApprove: true } });
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(true);
  });

  it("interactive: the run pauses at an interrupt and resumes with the answer", async () => {
    fake = await startFake({ script: approvalScript });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    const first = await runCoder(fake, "Run the check", {
      workspace: ws,
      checkpointer,
      context: { interactive: true },
    });
    expect(first.snapshot.next).toEqual(["tool-execute"]);
    const pending = first.snapshot.tasks.flatMap((t) => t.interrupts);
    expect(pending[0]?.value).toMatchObject({ type: "approval", command: NEEDS_APPROVAL });
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(false);

    const second = await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      threadId: first.threadId,
      resume: "yes",
      context: { interactive: true },
    });
    expect(second.state.status).toBe("done");
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(true);
  });
});

describe("asking a human when the ladder runs out", () => {
  it("interrupts at the last rung; the person's guidance reaches the model and the run finishes", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.userText.includes("write it to hello.txt")
          ? req.last?.role === "tool"
            ? { content: "Done." }
            : calls(call("write_file", { path: "hello.txt", content: "hi" }))
          : { content: "" },
      ),
    });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    const first = await runCoder(fake, "Create the greeting", {
      workspace: ws,
      checkpointer,
      context: { interactive: true },
    });
    const pending = first.snapshot.tasks.flatMap((t) => t.interrupts);
    expect(pending[0]?.value).toMatchObject({
      type: "ask_human",
      kind: "empty",
      summary: "I wrote what I could; the task is not finished.",
    });
    const second = await runCoder(fake, null, {
      workspace: ws,
      checkpointer,
      threadId: first.threadId,
      resume: "write it to hello.txt",
      context: { interactive: true },
    });
    expect(second.state.status).toBe("done");
    expect(existsSync(path.join(ws, "hello.txt"))).toBe(true);
  });
});

describe("approval with the side-effect journal", () => {
  it("a command paused for approval runs after the approval (the pause is not a crash)", async () => {
    const { InMemoryStore } = await import("@langchain/langgraph");
    fake = await startFake({ script: approvalScript });
    const ws = tempWorkspace();
    const checkpointer = new MemorySaver();
    const store = new InMemoryStore();
    const { createCoderGraph } = await import("../../src/coder/graph.js");
    const { runConfig } = await import("../../src/coder/context.js");
    const { HumanMessage } = await import("@langchain/core/messages");
    const { Command } = await import("@langchain/langgraph");
    const graph = createCoderGraph().compile({ checkpointer, store });
    const config = runConfig("journal", {
      workspace: ws,
      ollamaUrl: fake.url,
      interactive: true,
      retryBaseMs: 5,
    });
    await graph.invoke({ messages: [new HumanMessage("Run the check")] }, config);
    expect((await graph.getState(config)).next).toEqual(["tool-execute"]);
    await graph.invoke(new Command({ resume: "yes" }), config);
    expect(existsSync(path.join(ws, "approved.txt"))).toBe(true);
  });
});
