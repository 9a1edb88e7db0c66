/**
 * What real servers showed at the model edge (issue 24), against both fakes: a generation budget
 * on every call by kind (what the server received), a reply cut at the budget never run, the
 * conversation kept whole when a server repeats its completion id, the server's own cache counts,
 * and arguments encoded twice repaired on both providers (issue 27).
 */
import type { TurnUsage } from "../../src/coder/turn-sums.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import type { Callbacks } from "@langchain/core/callbacks/manager";
import type { LLMResult } from "@langchain/core/outputs";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig, type SettingsInput } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { DEFAULT_BUDGET } from "../../src/models/budget.js";
import { ModelServerError } from "../../src/models/errors.js";
import { startFakeOllama } from "../../src/testing/fake-ollama/index.js";
import type { ChatBody, Script } from "../../src/testing/fake-ollama/types.js";
import {
  startFakeOpenAI,
  type FakeOpenAI,
  type FakeOpenAIOptions,
  type OpenAIChatBody,
} from "../../src/testing/fake-openai/index.js";
import { call, calls, keelScript, tempWorkspace } from "../support/harness.js";

type Provider = "ollama" | "openai";
const PROVIDERS: Provider[] = ["ollama", "openai"];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

/** What a request body asked for, whichever provider received it. */
interface Sent {
  kind: "classify" | "plan" | "turn";
  budget: unknown;
  text: string;
}

/** Starts the provider's fake; returns the run settings that reach it and what it received. */
async function serve(provider: Provider, script: Script, extra: FakeOpenAIOptions = {}) {
  if (provider === "ollama") {
    const f = await startFakeOllama({ script });
    closers.push(() => f.close());
    const sent = (): Sent[] =>
      f.requests
        .filter((r) => r.path === "/api/chat")
        .map((r) => r.body as ChatBody)
        .map((b) => ({
          kind: kindOf(JSON.stringify(b.format ?? "")),
          budget: b.options?.num_predict,
          text: JSON.stringify(b.messages),
        }));
    return { settings: { ollamaUrl: f.url, model: "qwen3:8b" }, sent, ollama: f };
  }
  const f = await startFakeOpenAI({ server: "llama.cpp", script, ...extra });
  closers.push(() => f.close());
  const sent = (): Sent[] =>
    f.chatBodies().map((b: OpenAIChatBody & { max_tokens?: number }) => ({
      kind: kindOf(JSON.stringify(b.response_format ?? "")),
      budget: b.max_tokens,
      text: JSON.stringify(b.messages),
    }));
  return {
    settings: {
      provider: "openai" as const,
      baseUrl: f.baseUrl,
      model: "qwen2.5-coder-7b-instruct",
    },
    sent,
    fake: f,
    ollama: undefined,
  };
}

const kindOf = (format: string): Sent["kind"] =>
  format.includes('"intent"') ? "classify" : format.includes('"steps"') ? "plan" : "turn";

let counter = 0;
async function run(
  provider: Provider,
  script: Script,
  request: string,
  context: Partial<SettingsInput> = {},
  extra: FakeOpenAIOptions = {},
  streamed = false,
  callbacks: Callbacks = [],
) {
  const workspace = tempWorkspace();
  const served = await serve(provider, script, extra);
  const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
  const config = runConfig(`edge-${++counter}`, {
    ...served.settings,
    workspace,
    retryBaseMs: 5,
    ...context,
  });
  Object.assign(config, { callbacks });
  const input = { messages: [new HumanMessage(request)] };
  let state: CoderStateValue | undefined;
  if (streamed) {
    // As the CLI runs it: the reply arrives in chunks (the client's stream path).
    const stream = await graph.stream(input, { ...config, streamMode: ["values", "messages"] });
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>)
      if (mode === "values") state = chunk as CoderStateValue;
  } else state = await graph.invoke(input, config);
  return { state: state!, workspace, sent: served.sent() };
}

const writeHello = keelScript((req) =>
  req.turn === 0
    ? calls(call("write_file", { path: "hello.py", content: "print('hi')\n" }))
    : { content: "Wrote hello.py." },
);

describe.each(PROVIDERS)("generation budget on %s", (provider) => {
  it("every call carries the budget of its kind: classify, plan, act", async () => {
    // Worded so the rules are unsure and the model classifies the intent.
    const { state, sent } = await run(provider, writeHello, "the thing with hello.py");
    expect(state.status).toBe("done");
    const kinds = sent.map((s) => s.kind);
    expect(kinds).toContain("classify");
    expect(kinds).toContain("plan");
    for (const s of sent)
      expect(s.budget).toBe(
        { classify: DEFAULT_BUDGET.classify, plan: DEFAULT_BUDGET.plan, turn: DEFAULT_BUDGET.act }[
          s.kind
        ],
      );
  });

  it("takes the run's setting, per kind", async () => {
    const { sent } = await run(provider, writeHello, "Create hello.py that prints hi", {
      generationBudget: { act: 3000, plan: 600 },
    });
    expect(sent.filter((s) => s.kind === "turn").map((s) => s.budget)).toEqual([3000, 3000]);
    expect(sent.filter((s) => s.kind === "plan").map((s) => s.budget)).toEqual([600]);
  });

  it.each([false, true])(
    "a call cut at the budget is never run (streamed: %s); the model is told and does it smaller",
    async (streamed) => {
      const script = keelScript((req) => {
        const told = req.messages.some((m) => m.content.includes("cut at the generation budget"));
        if (req.turn === 0)
          return {
            // The arguments end mid-string, as a real server's do when the budget runs out.
            toolCalls: [
              { name: "write_file", arguments: '{"path": "big.py", "content": "print(1)\\nprint(' },
            ],
            doneReason: "length",
          };
        if (told && !req.toolResults.length)
          return calls(call("write_file", { path: "small.py", content: "print(1)\n" }));
        return { content: "Wrote small.py." };
      });
      const { state, workspace, sent } = await run(
        provider,
        script,
        // No file named: the run is done with small.py (a named big.py left unwritten is `unmet`).
        "Create a Python script that prints 1",
        {},
        {},
        streamed,
      );
      expect(existsSync(path.join(workspace, "big.py"))).toBe(false);
      expect(readFileSync(path.join(workspace, "small.py"), "utf8")).toBe("print(1)\n");
      expect(state.trail.map((t) => t.target)).toEqual(["small.py"]);
      expect(state.strikes.cut).toBe(1);
      const told = sent.filter((s) => s.kind === "turn")[1]!.text;
      expect(told).toContain(
        `cut at the generation budget of ${DEFAULT_BUDGET.act} tokens while writing a call to write_file`,
      );
      expect(state.status).toBe("done");
    },
  );

  it("arguments encoded twice are repaired: the call runs, the file is on disk", async () => {
    const args = JSON.stringify({ path: "twice.txt", content: "encoded twice\n" });
    const script = keelScript((req) =>
      req.turn === 0
        ? { toolCalls: [{ name: "write_file", arguments: JSON.stringify(args) }] }
        : { content: "Done." },
    );
    const { state, workspace } = await run(provider, script, "Create twice.txt");
    expect(readFileSync(path.join(workspace, "twice.txt"), "utf8")).toBe("encoded twice\n");
    expect(state.status).toBe("done");
  });
});

describe("assistant messages stay distinct", () => {
  it("a server that repeats one completion id: every turn is kept", async () => {
    const script = keelScript((req) =>
      req.turn < 3
        ? calls(call("write_file", { path: `f${req.turn}.txt`, content: `${req.turn}\n` }))
        : { content: "Wrote three files." },
    );
    const { state, sent } = await run(
      "openai",
      script,
      "Create f0.txt, f1.txt and f2.txt",
      {},
      { completionId: "chatcmpl-same" },
    );
    expect(state.status).toBe("done");
    const ai = state.messages.filter((m) => AIMessage.isInstance(m));
    expect(
      ai.map((m) => (m.tool_calls?.[0]?.args.path as string | undefined) ?? m.content),
    ).toEqual(["f0.txt", "f1.txt", "f2.txt", "Wrote three files."]);
    expect(new Set(ai.map((m) => m.id)).size).toBe(4);
    // The last request shows the model all three of its earlier turns.
    const last = sent.filter((s) => s.kind === "turn").at(-1)!.text;
    for (const f of ["f0.txt", "f1.txt", "f2.txt"]) expect(last).toContain(f);
  });
});

describe("cache reuse", () => {
  const usages = (state: CoderStateValue) =>
    state.messages
      .map((m) => (m.response_metadata as { keel_usage?: TurnUsage }).keel_usage)
      .filter((u): u is TurnUsage => u !== undefined);

  it("llama.cpp: the reused tokens are the server's own count (cached_tokens)", async () => {
    // What the client library read of each act turn's answer (the stored message keeps keel's
    // figures only): the server's cached_tokens.
    const node = new Map<string, unknown>();
    const cached: unknown[] = [];
    const seen = {
      handleChatModelStart: (...a: unknown[]) =>
        node.set(a[2] as string, (a[6] as { langgraph_node?: string })?.langgraph_node),
      handleLLMEnd: (output: LLMResult, runId: string) => {
        const message = (output.generations[0]?.[0] as { message?: AIMessage })?.message;
        if (node.get(runId) === "act")
          cached.push(message?.usage_metadata?.input_token_details?.cache_read);
      },
    };
    const { state } = await run(
      "openai",
      writeHello,
      "Create hello.py that prints hi",
      {},
      {},
      false,
      [seen],
    );
    const u = usages(state);
    expect(u.map((x) => x.reusedFrom)).toEqual(["server", "server"]);
    expect(u.map((x) => x.reusedTokens)).toEqual(cached);
    expect(u[1]!.reusedTokens).toBeGreaterThan(0);
  });

  it("a server that reports no cache figures: keel's estimate, marked as one", async () => {
    const { state } = await run("ollama", writeHello, "Create hello.py that prints hi");
    expect(usages(state).map((x) => x.reusedFrom)).toEqual(["estimate", "estimate"]);
  });
});

describe("truthful errors (OpenAI-compatible)", () => {
  async function openai(opts: FakeOpenAIOptions) {
    const f = await startFakeOpenAI({ server: "llama.cpp", ...opts });
    closers.push(() => f.close());
    return f;
  }
  async function runOn(f: FakeOpenAI, request: string, context: Partial<SettingsInput> = {}) {
    const workspace = tempWorkspace();
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    const config = runConfig(`edge-${++counter}`, {
      provider: "openai",
      baseUrl: f.baseUrl,
      model: "qwen2.5-coder-7b-instruct",
      workspace,
      retryBaseMs: 5,
      ...context,
    });
    const state = (await graph.invoke(
      { messages: [new HumanMessage(request)] },
      config,
    )) as CoderStateValue;
    return { state, workspace };
  }

  it("a context too small for keel's own prompt: the server's n_ctx named, no advice to lower keel's", async () => {
    const f = await openai({
      models: { "qwen2.5-coder-7b-instruct": { contextLength: 512, tools: true } },
      script: writeHello,
    });
    const err = await runOn(f, "Create hello.py that prints hi").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelServerError);
    expect((err as ModelServerError).kind).toBe("context_small");
    const message = (err as Error).message;
    expect(message).toMatch(/is 512 tokens, smaller than keel's minimum prompt of \d+ tokens/);
    // the context it advises takes the prompt: a long request is told a larger one
    const advice = (m: string) => ({
      floor: Number(/minimum prompt of (\d+) tokens/.exec(m)?.[1]),
      need: Number(/needs a context of at least (\d+) tokens/.exec(m)?.[1]),
    });
    const short = advice(message);
    expect(short.need).toBeGreaterThan(short.floor);
    expect(message).toContain(`llama-server -c ${short.need} `);
    expect(message).not.toMatch(/lower --context-window/i);
    // Refused before a doomed model turn was sent.
    expect(f.chatBodies({ turnsOnly: true })).toEqual([]);
    const long = await runOn(f, `Summarise this: ${"word ".repeat(40_000)}`).catch((e: Error) => e);
    const big = advice((long as Error).message);
    expect(big.floor).toBeGreaterThan(short.need);
    expect(big.need).toBeGreaterThan(big.floor);
    expect((long as Error).message).toContain(`llama-server -c ${big.need} `);
  });

  it("exceed_context_size_error: its n_prompt_tokens and n_ctx are read and the prompt refitted", async () => {
    const big = Array.from({ length: 600 }, (_, i) => `line ${i}: ${"x".repeat(40)}`).join("\n");
    const seen: Array<{ tokens: number; refused?: number }> = [];
    let refusedOnce = false;
    const f = await openai({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("read_file", { path: "big.txt" }));
        if (req.turn === 1 && !refusedOnce) {
          refusedOnce = true;
          const window = req.promptTokens - 2000;
          seen.push({ tokens: req.promptTokens, refused: window });
          return {
            fault: "status",
            status: 400,
            error: `request (${req.promptTokens} tokens) exceeds the available context size (${window} tokens), try increasing it`,
          };
        }
        seen.push({ tokens: req.promptTokens });
        return { content: "big.txt holds 600 numbered lines." };
      }),
    });
    const workspace = tempWorkspace();
    writeFileSync(path.join(workspace, "big.txt"), big);
    const { state } = await runOn(f, "What does big.txt hold?", { workspace });
    expect(state.status).toBe("done");
    const window = seen[0]!.refused!;
    expect(state.fit?.window).toBe(window);
    // The retried request fits the server's window.
    expect(seen[1]!.tokens).toBeLessThan(window);
  });

  it("401: an auth error that names --api-key and OPENAI_API_KEY", async () => {
    const f = await openai({ apiKey: "sk-local", script: writeHello });
    const err = await runOn(f, "Create hello.py", { apiKey: "wrong" }).catch((e: unknown) => e);
    expect((err as ModelServerError).kind).toBe("auth");
    expect((err as Error).message).toMatch(/Invalid API Key.*--api-key or OPENAI_API_KEY/s);
  });

  it("a schema the server cannot turn into a grammar: named, and asked again with tools in the prompt", async () => {
    const f = await openai({
      script: keelScript((req) => {
        if (req.toolNames.length)
          return {
            fault: "status",
            status: 400,
            error:
              "Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed",
          };
        const done = req.messages.some(
          (m) => m.role !== "system" && /created hello\.py/.test(m.content),
        );
        return done
          ? { content: "Wrote hello.py." }
          : {
              content:
                '<tool_call>\n{"name": "write_file", "arguments": {"path": "hello.py", "content": "print(1)\\n"}}\n</tool_call>',
            };
      }),
    });
    const { state, workspace } = await runOn(f, "Create hello.py that prints 1");
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(workspace, "hello.py"), "utf8")).toBe("print(1)\n");
    expect(state.toolChannel?.pinned).toMatch(/Unable to generate parser/);
    expect(f.chatBodies({ turnsOnly: true }).at(-1)!.tools).toBeUndefined();
  });
});

describe("a reply the end of the context cut", () => {
  // Prose of ~n tokens for the fakes' tokenizer (English: ~4.6 characters a token).
  const prose = (n: number, seed: string) =>
    Array.from(
      { length: Math.ceil(n / 9) },
      (_, i) => `The ${seed} note ${i} says little more.`,
    ).join("\n");

  it("is never run; keel makes room for its budget and asks again: the whole file is on disk", async () => {
    const big = prose(1800, "written");
    // Three reads bring the prompt near the window's end; then the write, until the tool says it ran.
    let reads = 0;
    const script = keelScript((req) => {
      if (reads < 3) return calls(call("read_file", { path: `n${reads++}.txt` }));
      if (!req.toolResults.some((t) => t.content.includes("big.txt")))
        return calls(call("write_file", { path: "big.txt", content: big }));
      return { content: "Wrote big.txt." };
    });
    const workspace = tempWorkspace();
    for (let i = 0; i < 3; i++)
      writeFileSync(path.join(workspace, `n${i}.txt`), prose(1250, `n${i}`));
    const served = await serve("openai", script, {
      models: { "qwen2.5-coder-7b-instruct": { contextLength: 8192 } },
    });
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    const state = (await graph.invoke(
      { messages: [new HumanMessage("Read n0.txt to n2.txt, then write big.txt")] },
      runConfig(`edge-room-${++counter}`, {
        ...served.settings,
        workspace,
        retryBaseMs: 5,
        contextWindow: 8192,
      }),
    )) as CoderStateValue;
    const bodies = served.fake!.chatBodies();
    const answers = served.fake!.answers;
    // One reply was cut at the budget the window left it ("length" under the act budget), short
    // of the context's end: every budget fits what the window leaves after its prompt.
    const cutAt = answers.findIndex((a) => a.finish === "length");
    expect(cutAt).toBeGreaterThan(0);
    expect(bodies[cutAt]!.max_tokens).toBeLessThan(DEFAULT_BUDGET.act);
    for (const [i, a] of answers.entries()) {
      expect(a.usage.prompt_tokens + a.usage.completion_tokens).toBeLessThan(8192);
      expect(bodies[i]!.max_tokens).toBeLessThanOrEqual(8192 - a.usage.prompt_tokens);
    }
    // Asked again, folded to leave the budget's room: the next prompt is smaller and the reply whole.
    expect(answers[cutAt + 1]!.usage.prompt_tokens).toBeLessThanOrEqual(8192 - 4096);
    expect(answers[cutAt + 1]!.finish).toBe("tool_calls");
    expect(answers.filter((a) => a.finish === "length")).toHaveLength(1);
    expect(bodies[cutAt + 1]!.max_tokens).toBeGreaterThanOrEqual(
      answers[cutAt + 1]!.usage.completion_tokens,
    );
    expect(readFileSync(path.join(workspace, "big.txt"), "utf8")).toBe(big);
    // The cut reply never reached the conversation, and nothing counts it as the model's failure.
    expect(state.strikes.cut ?? 0).toBe(0);
    expect(state.status).toBe("done");
  });

  it("is not sent again as it was when its prompt already leaves that room; the model is told the context's end", async () => {
    const big = prose(3000, "written");
    const script = keelScript((req) =>
      req.toolResults.some((t) => t.content.includes("end of the server's context"))
        ? { content: "The file is too big for this server's context." }
        : calls(call("write_file", { path: "big.txt", content: big })),
    );
    const served = await serve("openai", script, {
      models: { "qwen2.5-coder-7b-instruct": { contextLength: 4096 } },
    });
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    await graph.invoke(
      { messages: [new HumanMessage("Write big.txt")] },
      runConfig(`edge-end-${++counter}`, {
        ...served.settings,
        workspace: tempWorkspace(),
        retryBaseMs: 5,
        contextWindow: 4096,
        maxTurns: 3,
      }),
    );
    const answers = served.fake!.answers;
    const bodies = served.fake!.chatBodies();
    const cutAt = answers.findIndex((a) => a.finish === "length");
    expect(cutAt).toBeGreaterThanOrEqual(0);
    // stopped by the budget the window left it, short of the context's end
    expect(
      answers[cutAt]!.usage.prompt_tokens + answers[cutAt]!.usage.completion_tokens,
    ).toBeLessThan(4096);
    expect(bodies[cutAt]!.max_tokens).toBe(answers[cutAt]!.usage.completion_tokens);
    // the next request is the next turn, with the cut told, not the same prompt again
    const next = JSON.stringify(bodies[cutAt + 1]!.messages);
    expect(next).not.toBe(JSON.stringify(bodies[cutAt]!.messages));
    expect(next).toContain(
      "ran into the end of the server's context (4096 tokens, the prompt included) before its budget of 8192 tokens while writing a call to write_file",
    );
  });
});

describe.each(PROVIDERS)("budgets that fit the window on %s", (provider) => {
  // Text that never repeats (a reply keel's loop watch would stop is no test of the budget).
  const words = (n: number) => {
    let x = 7;
    return Array.from({ length: n }, () => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return `w${x.toString(36).slice(0, 5)}`;
    }).join(" ");
  };

  it("no reply runs to the end of a 4,096-token context: every budget is what the window leaves after the prompt", async () => {
    const WINDOW = 4096;
    // The act turn rambles on; told it was cut, the model writes the file.
    const script = keelScript((req) =>
      req.turn === 0
        ? { content: words(6000) }
        : req.toolResults.length === 0
          ? calls(call("write_file", { path: "a.txt", content: "a\n" }))
          : { content: "Wrote a.txt." },
    );
    const served = await serve(
      provider,
      script,
      provider === "openai"
        ? { models: { "qwen2.5-coder-7b-instruct": { contextLength: WINDOW, tools: true } } }
        : {},
    );
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    const state = (await graph.invoke(
      { messages: [new HumanMessage("Create a.txt containing a")] },
      runConfig(`edge-fit-${++counter}`, {
        ...served.settings,
        workspace: tempWorkspace(),
        retryBaseMs: 5,
        contextWindow: WINDOW,
      }),
    )) as CoderStateValue;
    expect(state.status).toBe("done");
    // What the server counted of each request and reply, and the budget each request carried.
    const counted =
      provider === "openai"
        ? served.fake!.answers.map((a) => ({
            prompt: a.usage.prompt_tokens,
            reply: a.usage.completion_tokens,
          }))
        : served.ollama!.prefill.map((p) => ({
            prompt: p.promptTokens,
            reply: p.generatedTokens,
          }));
    const budgets = served.sent().map((s) => Number(s.budget));
    expect(counted).toHaveLength(budgets.length);
    for (const [i, c] of counted.entries()) {
      expect(c.prompt + c.reply).toBeLessThan(WINDOW);
      expect(budgets[i]).toBeLessThanOrEqual(WINDOW - c.prompt);
    }
    // the rambling act reply was stopped by its budget: as long as the window allowed, and no longer
    const ramble = counted.findIndex((c) => c.reply > 1000);
    expect(counted[ramble]!.reply).toBe(budgets[ramble]);
    expect(budgets[ramble]).toBeLessThan(DEFAULT_BUDGET.act);
  });
});
