/**
 * What real servers do to a run, end to end: the keel command against the fake Ollama over HTTP,
 * asserting what the server received. The server's own tool-call parser failing (ollama issues
 * 18563, 11704, 14834), a prompt cut at the window and still answered (issues 3839, 17427), a model
 * context smaller than the window asked for, and thinking models (the tool-calling docs ask for
 * `thinking` back on the assistant's tool-call message; `think` + `format` returns nothing, issue
 * 10976).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ChatBody, FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { runKeel } from "../support/cli.js";
import { call, calls, keelScript, fakeOllamaPerTest, tempWorkspace } from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

/** `keel run <request> --json` on a workspace with a model of the fake. */
const runRequest = (request: string, ws: string, model: string, ...more: string[]) =>
  runKeel([
    "run",
    request,
    "-w",
    ws,
    "--model",
    model,
    "--ollama-url",
    fake!.url,
    "--json",
    ...more,
  ]);
const run = (ws: string, model: string, ...more: string[]) =>
  runRequest("Create notes.txt with the word done", ws, model, ...more);

/** Model turns: requests without `format` (not the planning call). */
const turns = () => fake!.chatBodies({ turnsOnly: true });
const TEXT_CALL =
  '<tool_call>\n{"name": "write_file", "arguments": {"path": "notes.txt", "content": "done"}}\n</tool_call>';

describe("the server's own tool-call parser fails", () => {
  it("an HTTP 500 from the parser: that turn is asked again without the tools field, and the run finishes", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        const answered = req.messages.some(
          (m) => m.role === "tool" || m.content.startsWith("<tool_response"),
        );
        if (answered) return { content: "Created notes.txt." };
        return req.toolNames.length
          ? calls(call("write_file", { path: "notes.txt", content: "done" }))
          : { content: TEXT_CALL };
      }),
    });
    // the first model turn (after the planning call) breaks the server's parser
    fake.onChat((_req, i) => {
      if (i === 1)
        fake!.inject({
          fault: "status",
          status: 500,
          error:
            'error parsing tool call: raw=\'{"name": "write_file", "arguments": {"path": "notes.txt", "content": "do\', err=unexpected end of JSON input',
        });
    });
    const ws = tempWorkspace();
    const r = await run(ws, "qwen3:8b");
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("done");
    const t = turns();
    // refused once with tools; the same turn again without them, tools described in the prompt
    expect(t[0]!.tools?.length).toBeGreaterThan(0);
    expect(t[1]!.tools).toBeUndefined();
    expect(t[1]!.messages![0]!.content).toContain('<tool name="write_file">');
    // one failure does not pin the run: the next turn is native again
    expect(t[2]!.tools?.length).toBeGreaterThan(0);
    expect(r.stderr).toContain("the server's tool channel failed");
  });

  it("a parse error in the stream, twice: the rest of the run stays in prompt mode", async () => {
    const results = (req: { messages: Array<{ content: string }> }) =>
      req.messages.filter((m) => m.content.startsWith("<tool_response")).length;
    fake = await startFake({
      script: keelScript((req) => {
        if (req.toolNames.length > 0)
          return {
            fault: "stream-error",
            error: "XML syntax error on line 3: element <parameter> closed by </function>",
          };
        if (results(req) === 0) return { content: TEXT_CALL };
        if (results(req) === 1)
          return {
            content:
              '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>',
          };
        return { content: "Created and checked notes.txt." };
      }),
    });
    const ws = tempWorkspace();
    const r = await run(ws, "qwen3:8b");
    expect(r.code).toBe(0);
    expect(readFileSync(path.join(ws, "notes.txt"), "utf8")).toBe("done");
    const t = turns();
    const withTools = t.filter((b) => b.tools?.length);
    // two native attempts failed in the server's parser; after that no request carries tools
    expect(withTools).toHaveLength(2);
    const lastNative = t.lastIndexOf(withTools[1]!);
    expect(t.slice(lastNative + 1).length).toBeGreaterThanOrEqual(2);
    expect(t.slice(lastNative + 1).every((b) => b.tools === undefined)).toBe(true);
    expect(r.stderr).toContain("the rest of the run describes tools in the prompt");
  });
});

describe("windows", () => {
  it("num_ctx never exceeds the model's context, in every request", async () => {
    fake = await startFake({
      models: {
        "small:8b": { capabilities: ["completion", "tools"], family: "qwen3", contextLength: 8192 },
      },
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "notes.txt", content: "done" }))
          : { content: "Done." },
      ),
    });
    const ws = tempWorkspace();
    const r = await run(ws, "small:8b", "--context-window", "32768");
    expect(r.code).toBe(0);
    const ctx = fake.chatBodies().map((b) => (b.options as { num_ctx?: number }).num_ctx);
    expect(ctx.length).toBeGreaterThanOrEqual(3);
    expect(ctx.every((n) => n === 8192)).toBe(true);
    // one num_ctx for the whole run: the model was loaded once
    expect(fake.prefill.filter((p) => p.loaded)).toHaveLength(1);
  });

  it("a prompt over the server's context is refused, never cut and answered: keel refits and asks again", async () => {
    // A follow-up on a thread with a long history, now with a model whose tokenizer makes two
    // characters a token (dense text) and whose context is small: keel's first estimate (3.5
    // characters a token, nothing learned yet for this model) is too optimistic.
    fake = await startFake({
      models: {
        "qwen3:8b": {
          capabilities: ["completion", "tools"],
          family: "qwen3",
          contextLength: 40960,
        },
        "dense:4b": {
          capabilities: ["completion", "tools"],
          family: "qwen3",
          contextLength: 4096,
          charsPerToken: 2,
        },
      },
      script: keelScript((req) => {
        // A model that lost the start of its prompt acts on what it has left: it writes junk.
        if (req.truncated)
          return calls(call("write_file", { path: "JUNK.txt", content: "lost the request" }));
        const called = (what: string) =>
          req.messages.some(
            (m) => m.role === "assistant" && JSON.stringify(m.tool_calls ?? []).includes(what),
          );
        if (req.userText.includes("more.txt"))
          return called("more.txt")
            ? { content: "Created more.txt." }
            : calls(call("write_file", { path: "more.txt", content: "more" }));
        if (!called("big.txt")) return calls(call("read_file", { path: "big.txt" }));
        if (!called("notes.txt"))
          return calls(call("write_file", { path: "notes.txt", content: "done" }));
        return { content: "Created notes.txt." };
      }),
    });
    const ws = tempWorkspace();
    // sized so the follow-up's prompt is just under keel's budget by its own estimate
    writeFileSync(path.join(ws, "big.txt"), "word ".repeat(700));
    const first = await run(ws, "qwen3:8b", "--thread", "long");
    expect(first.code).toBe(0);
    const from = fake.prefill.length;
    const asked = () => fake!.requests.filter((q) => q.path === "/api/chat").length;
    const askedBefore = asked();
    const r = await runRequest("Now create more.txt as well", ws, "dense:4b", "--thread", "long");
    const seen = fake.prefill.slice(from);
    // keel asks Ollama not to truncate: the too-long prompt is refused (never answered, so not in
    // `prefill`), never cut, and keel refits and asks again.
    expect(asked() - askedBefore).toBeGreaterThan(seen.length);
    expect(seen.every((p) => !p.truncated)).toBe(true);
    expect(existsSync(path.join(ws, "JUNK.txt"))).toBe(false);
    expect(r.stderr).toContain("the server refused a prompt as over its context");
    expect(readFileSync(path.join(ws, "more.txt"), "utf8")).toBe("more");
    expect(r.code).toBe(0);
  });

  it("tool results are cut to the model's window, not to the window asked for", async () => {
    fake = await startFake({
      models: {
        "small:4b": { capabilities: ["completion", "tools"], family: "qwen3", contextLength: 4096 },
      },
      script: keelScript((req) =>
        req.toolResults.length === 0 && !req.messages.some((m) => m.role === "tool")
          ? calls(call("read_file", { path: "big.txt" }))
          : { content: "Read it." },
      ),
    });
    const ws = tempWorkspace();
    writeFileSync(path.join(ws, "big.txt"), "0123456789\n".repeat(2000));
    const r = await runRequest("Summarise big.txt", ws, "small:4b");
    expect(r.code).toBe(0);
    const result = turns()
      .flatMap((b) => b.messages ?? [])
      .find((m) => m.role === "tool");
    // a quarter of 16,384 tokens would allow 16,000 characters; the model's 4,096 allows 4,096
    expect(result!.content.length).toBeLessThanOrEqual(4096 + 200);
    expect(result!.content).toContain("keel cut");
  });

  it("a window too small for keel's own prompt stops the run with an error naming both sizes", async () => {
    fake = await startFake({
      models: {
        "tiny:1b": {
          capabilities: ["completion", "tools"],
          family: "qwen3",
          contextLength: 1024,
          charsPerToken: 0.5,
        },
      },
      script: keelScript(() => ({ content: "I cannot see the request." })),
    });
    const ws = tempWorkspace();
    const r = await run(ws, "tiny:1b");
    expect(r.code).toBe(3);
    expect(String(r.json?.error)).toMatch(
      /too small for keel: the window \(num_ctx\) is 1024 tokens, smaller than keel's minimum prompt of \d+ tokens/,
    );
    expect(String(r.json?.error)).toMatch(/Raise it with --context-window/);
    expect(existsSync(path.join(ws, "notes.txt"))).toBe(false);
  });
});

describe("thinking models", () => {
  const thinkingScript = keelScript((req) =>
    req.turn === 0
      ? {
          thinking: "The user wants notes.txt; write_file does it.",
          ...calls(call("write_file", { path: "notes.txt", content: "done" })),
        }
      : { content: "Created notes.txt." },
  );

  it("sends thinking back with the tool-call turn, thinks on model turns and never with format", async () => {
    fake = await startFake({ script: thinkingScript });
    const ws = tempWorkspace();
    const r = await run(ws, "qwen3:8b");
    expect(r.code).toBe(0);
    const t = turns();
    expect(t.every((b) => b.think === true)).toBe(true);
    const assistant = t[1]!.messages!.find((m) => m.role === "assistant" && m.tool_calls?.length);
    expect(assistant?.thinking).toBe("The user wants notes.txt; write_file does it.");
    const structured = fake.chatBodies().filter((b: ChatBody) => b.format !== undefined);
    expect(structured.length).toBeGreaterThan(0);
    expect(structured.every((b) => b.think === false)).toBe(true);
    // shown dimmed in the timeline
    expect(r.stderr).toContain("thinking: The user wants notes.txt");
  });

  it("--think off and levels: off is sent as false; a level only to a model that takes levels", async () => {
    fake = await startFake({
      models: {
        "qwen3:8b": {
          capabilities: ["completion", "tools", "thinking"],
          family: "qwen3",
          contextLength: 40960,
        },
        "gpt-oss:20b": {
          capabilities: ["completion", "tools", "thinking"],
          family: "gptoss",
          contextLength: 131072,
          template: "<|start|>assistant<|channel|>analysis<|message|>",
        },
      },
      script: thinkingScript,
    });
    expect((await run(tempWorkspace(), "qwen3:8b", "--think", "off")).code).toBe(0);
    expect(turns().every((b) => b.think === false)).toBe(true);
    const before = turns().length;
    expect((await run(tempWorkspace(), "qwen3:8b", "--think", "high")).code).toBe(0);
    expect(
      turns()
        .slice(before)
        .every((b) => b.think === true),
    ).toBe(true);
    const before2 = turns().length;
    expect((await run(tempWorkspace(), "gpt-oss:20b", "--think", "high")).code).toBe(0);
    expect(
      turns()
        .slice(before2)
        .every((b) => b.think === "high"),
    ).toBe(true);
  });
});
