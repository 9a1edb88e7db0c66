/** A run that waits long for the model or a command says what it waits for, not silence. */
import { describe, expect, it } from "vitest";
import { runSession } from "../../src/session/session.js";
import { call, calls, fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();

describe("a quiet run", () => {
  it("says what it waits for once the timeline has been quiet a while, and only then", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? { ...calls(call("write_file", { path: "a.txt", content: "a\n" })), delayMs: 900 }
          : { content: "Wrote a.txt." },
      ),
    });
    const lines: string[] = [];
    const outcome = await runSession({
      request: "Create a.txt",
      checkpoints: "memory",
      settings: { workspace: tempWorkspace(), ollamaUrl: fake.url },
      log: (l) => lines.push(l),
      quietMs: 400,
    });
    expect(outcome.status).toBe("done");
    const waits = lines.filter((l) => l.startsWith("… still waiting"));
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatch(
      /^… still waiting for the model's reply \(a long prompt is read first\): \d+ s so far \(Ctrl-C stops after this step\)$/,
    );
  });

  it("says nothing while a person is asked: the run waits for them, not the model", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "a.txt", content: "a\n" }))
          : { content: "Wrote a.txt." },
      ),
    });
    const lines: string[] = [];
    const outcome = await runSession({
      request: "Create a.txt",
      checkpoints: "memory",
      settings: { workspace: tempWorkspace(), ollamaUrl: fake.url, approval: "ask" },
      log: (l) => lines.push(l),
      // the person takes well over the quiet spell to answer
      ask: (q) => new Promise((r) => setTimeout(() => r(q.startsWith("Allow") ? "y" : ""), 2500)),
      quietMs: 1000,
    });
    expect(outcome.status).toBe("done");
    expect(lines.filter((l) => l.startsWith("… still waiting"))).toEqual([]);
  });
});
