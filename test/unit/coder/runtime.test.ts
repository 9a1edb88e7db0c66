import { FakeListChatModel } from "@langchain/core/utils/testing";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { runConfig } from "../../../src/coder/context.js";
import { nodeEnv } from "../../../src/coder/runtime.js";
import type { CapabilityProbe } from "../../../src/models/capabilities.js";
import type { GraphDeps } from "../../../src/run/model.js";
import { tempWorkspace } from "../../support/harness.js";

/** Deps that count the models built and the probes asked; the probe fails its first `failing` asks. */
function counted(failing = 0) {
  const n = { models: 0, probes: 0 };
  const probe: CapabilityProbe = (_url, model) => {
    n.probes++;
    if (n.probes <= failing) return Promise.reject(new Error("connection refused"));
    return Promise.resolve({
      model,
      capabilities: ["completion", "tools"],
      contextLength: 32_768,
      format: "hermes",
    });
  };
  const deps: GraphDeps = {
    createModel: () => {
      n.models++;
      return new FakeListChatModel({ responses: ["ok"] });
    },
    probe,
  };
  return { n, deps };
}

/** A step's config as LangGraph gives it: the run's context and writer, the step's own signal. */
const step = (run: ReturnType<typeof runConfig>, writer?: (e: unknown) => void) =>
  ({
    ...run,
    signal: new AbortController().signal,
    ...(writer ? { writer } : {}),
  }) as unknown as LangGraphRunnableConfig;

describe("nodeEnv: what a run resolves once", () => {
  it("builds the model and asks the server's capabilities once for all of a run's steps", async () => {
    const { n, deps } = counted();
    const run = runConfig("t", { workspace: tempWorkspace() });
    const writer = () => undefined;
    for (let i = 0; i < 5; i++) {
      const env = nodeEnv(step(run, writer), deps);
      const fit = await env.fit();
      expect(fit.window).toBeGreaterThan(0);
      expect(fit.chat).toBeDefined();
    }
    expect(n).toEqual({ models: 1, probes: 1 });
  });

  it("gives each step its own signal and the run's policy otherwise", () => {
    const { deps } = counted();
    const run = runConfig("t", { workspace: tempWorkspace(), retries: 7 });
    const [a, b] = [step(run), step(run)];
    const [ea, eb] = [nodeEnv(a, deps), nodeEnv(b, deps)];
    expect(ea.policy.signal).toBe(a.signal);
    expect(eb.policy.signal).toBe(b.signal);
    expect(eb.policy.retries).toBe(7);
  });

  it("asks again at the next step when the server was down at the first", async () => {
    const { n, deps } = counted(1);
    const run = runConfig("t", { workspace: tempWorkspace() });
    await expect(nodeEnv(step(run), deps).fit()).rejects.toThrow("connection refused");
    const fit = await nodeEnv(step(run), deps).fit();
    expect(fit.name).toBe(run.context.model);
    expect(n.probes).toBe(2);
  });

  it("resolves anew for another run, another graph, or another invoke's stream", async () => {
    const { n, deps } = counted();
    const { deps: other } = counted();
    const run = runConfig("t", { workspace: tempWorkspace() });
    await nodeEnv(step(run), deps).fit();
    await nodeEnv(step(runConfig("t", { workspace: tempWorkspace() })), deps).fit();
    await nodeEnv(
      step(run, () => undefined),
      deps,
    ).fit();
    await nodeEnv(step(run), other).fit();
    expect(n.models).toBe(3);
  });
});
