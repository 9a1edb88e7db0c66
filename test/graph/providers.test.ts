/**
 * The same scenarios against both providers — the fake Ollama and the fake OpenAI-compatible server
 * run the same scripts — so the tool channel, the guards and the recovery ladder are shown to be
 * shared, not Ollama's alone.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig, type SettingsInput } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { startFakeOllama } from "../../src/testing/fake-ollama/index.js";
import type { Script } from "../../src/testing/fake-ollama/types.js";
import { startFakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

type Provider = "ollama" | "openai";
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** Starts the provider's fake with `script`; returns the run settings that reach it. */
async function serve(provider: Provider, script: Script): Promise<Partial<SettingsInput>> {
  if (provider === "ollama") {
    const f = await startFakeOllama({ script });
    closers.push(() => f.close());
    return { ollamaUrl: f.url, model: "qwen3:8b" };
  }
  const f = await startFakeOpenAI({ server: "llama.cpp", script });
  closers.push(() => f.close());
  return { provider: "openai", baseUrl: f.baseUrl, model: "qwen2.5-coder-7b-instruct" };
}

let counter = 0;
async function run(provider: Provider, script: Script, request: string) {
  const workspace = tempWorkspace();
  const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
  const config = runConfig(`p-${++counter}`, {
    ...(await serve(provider, script)),
    workspace,
    retryBaseMs: 5,
  });
  const state = (await graph.invoke(
    { messages: [new HumanMessage(request)] },
    config,
  )) as CoderStateValue;
  return { state, workspace };
}

const PROVIDERS: Provider[] = ["ollama", "openai"];

describe.each(PROVIDERS)("on %s", (provider) => {
  it("unknown tools three times → the ladder's hint → done", async () => {
    const script = keelScript((req) => {
      if (req.turn < 3)
        return {
          ...calls(call(`makeEndpoint${req.turn}`, { route: "/u" })),
          allowUnknownTools: true,
        };
      if (req.turn === 3)
        return calls(call("write_file", { path: "users.js", content: "export {}" }));
      return { content: "Done." };
    });
    const { state, workspace } = await run(provider, script, "Create users.js");
    expect(state.strikes).toEqual({ unknown_tool: 1 });
    expect(state.status).toBe("done");
    expect(existsSync(path.join(workspace, "users.js"))).toBe(true);
  });

  it("prose instead of action → told to act → acts → done", async () => {
    const script = keelScript((req) => {
      if (req.turn === 0) return { content: "I will create the file hello.txt with a greeting." };
      if (req.turn === 1) return calls(call("write_file", { path: "hello.txt", content: "hi" }));
      return { content: "Created hello.txt." };
    });
    const { state, workspace } = await run(provider, script, "Create hello.txt with a greeting");
    expect(state.strikes).toEqual({ prose: 1 });
    expect(existsSync(path.join(workspace, "hello.txt"))).toBe(true);
  });

  it("the same listing again and again is cut as a loop, and the run still finishes", async () => {
    const script = keelScript((req) => {
      if (req.turn < 4) return calls(call("list_dir", { path: "." }));
      if (req.turn === 4) return calls(call("write_file", { path: "a.txt", content: "a" }));
      return { content: "Done." };
    });
    const { state } = await run(provider, script, "Create a.txt");
    expect(state.trail.some((t) => t.kind === "loop")).toBe(true);
    expect(state.status).toBe("done");
  });

  it("a call written as text by a tools-capable model is salvaged", async () => {
    const script = keelScript((req) =>
      req.turn === 0
        ? {
            content:
              '<tool_call>\n{"name": "write_file", "arguments": {"path": "x.md", "content": "x"}}\n</tool_call>',
          }
        : { content: "Created x.md." },
    );
    const { state, workspace } = await run(provider, script, "Create x.md");
    expect(existsSync(path.join(workspace, "x.md"))).toBe(true);
    expect(state.status).toBe("done");
  });
});
