/**
 * keel eval --agent: the same task set run by a bare LangGraph ReAct agent and langchain's
 * createAgent with the same model, server and tools, against the fake's scripted profiles
 * (src/testing/eval-model.ts), whose numbers are known in advance: the bare agents pass what a
 * steady model does, and lose what keel repairs (sloppy field names) or salvages (calls as text).
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { EvalReport } from "../../src/eval/run.js";
import { EVAL_MODELS, evalModelScript } from "../../src/testing/eval-model.js";
import { DEFAULT_OPENAI_MODELS, startFakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { runKeel } from "../support/cli.js";
import { fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();

describe("keel eval --agent", () => {
  it("scores the bare agents on the same tasks: steady 6/6, sloppy loses the two tasks whose first call keel repairs, texty 0/6", async () => {
    const fake = await startFake({ models: EVAL_MODELS, script: evalModelScript() });
    const db = `sqlite:${path.join(tempWorkspace(), "eval.db")}`;
    const evaluate = async (agent: string, model: string) => {
      const r = await runKeel([
        "eval",
        "--ollama-url",
        fake.url,
        "--checkpoints",
        db,
        "--model",
        model,
        "-k",
        "1",
        "--agent",
        agent,
        "--json",
      ]);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout) as EvalReport;
    };
    for (const agent of ["react", "create-agent"]) {
      const steady = await evaluate(agent, "steady");
      expect(steady.agent).toBe(agent);
      expect(steady.modes).toEqual(["native"]);
      expect(steady.passK).toEqual({ native: { tasks: 6, passed: 6 } });
      // the scripted calls per task: create 1, edit 2, analyse 1, analyse-long 1, run 1, recover 4;
      // all well formed
      expect(steady.attempts.map((a) => [a.calls, a.wellFormed, a.repaired])).toEqual([
        [1, 1, 0],
        [2, 2, 0],
        [1, 1, 0],
        [1, 1, 0],
        [1, 1, 0],
        [4, 4, 0],
      ]);
      expect(steady.attempts.every((a) => a.promptTokens > 0)).toBe(true);

      // sloppy: the first call names a field wrongly (file_path, cmd); nothing repairs it
      const sloppy = await evaluate(agent, "sloppy");
      expect(sloppy.scores.filter((s) => !s.passK).map((s) => s.task)).toEqual([
        "create-greet",
        "run-tests",
      ]);
      expect(sloppy.attempts.map((a) => a.calls - a.wellFormed)).toEqual([1, 1, 0, 0, 1, 1]);

      // texty: calls written as text are not calls to a bare agent
      const texty = await evaluate(agent, "texty");
      expect(texty.passK).toEqual({ native: { tasks: 6, passed: 0 } });
      expect(texty.attempts.every((a) => a.calls === 0)).toBe(true);
    }
  }, 120_000);

  it("names the model as a llama-server serves it (it answers to any name), for keel and a bare agent alike", async () => {
    const served = "/models/tiny-coder.Q4_K_M.gguf";
    const f = await startFakeOpenAI({
      server: "llama.cpp",
      models: { [served]: DEFAULT_OPENAI_MODELS["qwen2.5-coder-7b-instruct"]! },
      script: evalModelScript(),
    });
    try {
      const db = `sqlite:${path.join(tempWorkspace(), "eval.db")}`;
      for (const agent of ["keel", "react"]) {
        const r = await runKeel([
          "eval",
          ...["--provider", "openai", "--base-url", f.baseUrl, "--checkpoints", db],
          ...["--model", "steady", "-k", "1", "--agent", agent, "--task", "create-greet"],
          ...(agent === "keel" ? ["--mode", "native"] : []),
          "--json",
        ]);
        expect(r.code, r.stderr).toBe(0);
        const report = JSON.parse(r.stdout) as EvalReport;
        expect(report.model).toBe(served);
        expect(report.passK).toEqual({ native: { tasks: 1, passed: 1 } });
      }
      // the requests went out under the name given, which the server ignored
      expect(f.chatBodies({ turnsOnly: true }).every((b) => b.model === "steady")).toBe(true);
      expect(f.violations).toEqual([]);
    } finally {
      await f.close();
    }
  }, 120_000);

  it("refuses --mode prompt for a bare agent (exit 2, nothing run)", async () => {
    const fake = await startFake({ models: EVAL_MODELS, script: evalModelScript() });
    const r = await runKeel([
      "eval",
      "--ollama-url",
      fake.url,
      "--checkpoints",
      `sqlite:${path.join(tempWorkspace(), "eval.db")}`,
      "--model",
      "steady",
      "--agent",
      "react",
      "--mode",
      "prompt",
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--mode prompt is keel's channel");
    expect(fake.requests.filter((q) => q.path === "/api/chat")).toHaveLength(0);
  });
});
