/** Model server faults during a run: retried with bounded backoff, or a clear ModelServerError. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ModelServerError } from "../../src/models/errors.js";
import type { FakeOllama, Reply } from "../../src/testing/fake-ollama/index.js";
import {
  call,
  calls,
  keelScript,
  runCoder,
  fakeOllamaPerTest,
  tempWorkspace,
} from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

const buildScript = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "out.txt", content: "done" }))
    : { content: "Wrote out.txt." },
);

describe("transient faults are retried and the run goes on", () => {
  const faults: Array<[string, Reply]> = [
    [
      "a 503",
      {
        fault: "status",
        status: 503,
        error: "server busy, please try again.  maximum pending requests exceeded",
      },
    ],
    ["a connection reset before the response", { fault: "reset-before" }],
    ["a stream cut mid-way", { fault: "cut-mid-stream" }],
    ["a stream without its done line", { fault: "no-done" }],
    [
      "an error line mid-stream",
      { fault: "stream-error", error: "model runner has unexpectedly stopped" },
    ],
  ];
  it.each(faults)("%s", async (_name, fault) => {
    fake = await startFake({ script: buildScript });
    const ws = tempWorkspace();
    // The plan request is the first chat request; fail the first model turn twice.
    let seen = 0;
    fake.onChat((req) => {
      if (!req.structured && seen++ < 2) fake!.inject(fault);
    });
    const { state } = await runCoder(fake, "Create out.txt", { workspace: ws });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "out.txt"), "utf8")).toBe("done");
    // plan + 2 failed attempts + the successful turn + the final turn
    expect(fake.chatBodies({ turnsOnly: true })).toHaveLength(4);
  });

  it("a first byte that never comes times out and is retried", async () => {
    fake = await startFake({ script: buildScript });
    let hung = false;
    fake.onChat((req) => {
      if (!req.structured && !hung) {
        hung = true;
        fake!.inject({ fault: "hang" });
      }
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create out.txt", {
      workspace: ws,
      context: { requestTimeoutMs: 300 },
    });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "out.txt"), "utf8")).toBe("done");
  });
});

describe("final faults end the run with a ModelServerError", () => {
  it("a missing model: no retry, the message says ollama pull", async () => {
    fake = await startFake({ script: buildScript });
    const err = await runCoder(fake, "Create out.txt", {
      workspace: tempWorkspace(),
      context: { model: "nosuch:7b" },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelServerError);
    expect((err as ModelServerError).kind).toBe("model_missing");
    expect((err as Error).message).toContain("ollama pull nosuch:7b");
    // Found out from /api/show, asked once: no chat request is sent for a model that is not there.
    expect(fake.requests.filter((r) => r.path.endsWith("/api/show"))).toHaveLength(1);
    expect(fake.chatRequests()).toHaveLength(0);
  });

  it("a 503 that persists: exactly retries+1 requests, then overloaded", async () => {
    fake = await startFake({
      script: () => ({
        fault: "status",
        status: 503,
        error: "server busy, please try again.  maximum pending requests exceeded",
      }),
    });
    const err = await runCoder(fake, "Create out.txt", {
      workspace: tempWorkspace(),
      context: { retries: 2 },
    }).catch((e: unknown) => e);
    expect((err as ModelServerError).kind).toBe("overloaded");
    expect(fake.chatRequests()).toHaveLength(3);
  });

  it("native mode forced on a model without tool support goes on in prompt mode", async () => {
    // A tool-less model writes its call as text when the tools are in its prompt.
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content:
                '<tool_call>\n{"name": "write_file", "arguments": {"path": "out.txt", "content": "done"}}\n</tool_call>',
            }
          : { content: "Wrote out.txt." },
      ),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create out.txt", {
      workspace: ws,
      context: { model: "gemma3:4b", toolMode: "native" },
    });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "out.txt"), "utf8")).toBe("done");
    const turns = fake.chatBodies({ turnsOnly: true });
    // the native request was refused once; every request after it has no tools field
    expect(turns[0]!.tools?.length).toBeGreaterThan(0);
    expect(turns.slice(1).every((b) => b.tools === undefined)).toBe(true);
    expect(turns[1]!.messages![0]!.content).toContain('<tool name="write_file">');
    expect(state.toolChannel?.pinned).toMatch(/does not support tools/);
  });
});
