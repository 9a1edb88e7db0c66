/**
 * F9: exactly one tool channel per model. Native for models with the tools capability, prompt mode
 * otherwise (tools described once, calls parsed from text); salvage of text calls in native mode;
 * an unparseable attempt gets the exact problem and syntax back.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../../src/tools/registry.js";
import {
  DEFAULT_FAKE_MODELS,
  type ChatBody,
  type FakeOllama,
} from "../../src/testing/fake-ollama/index.js";
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

const count = (text: string, needle: string) => text.split(needle).length - 1;
const systemOf = (b: ChatBody) => b.messages!.filter((m) => m.role === "system");

describe("prompt mode (model without the tools capability)", () => {
  it("completes a build: no tools field, each tool described exactly once, results as tool_response", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return {
            content:
              'I will create it.\n<tool_call>\n{"name": "write_file", "arguments": {"path": "src/hello.py", "content": "print(\\"hi\\")\\n"}}\n</tool_call>',
          };
        return { content: "Created src/hello.py." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create src/hello.py that prints hi", {
      workspace: ws,
      context: { model: "gemma3:4b" },
    });
    expect(state.status).toBe("done");
    expect(readFileSync(path.join(ws, "src/hello.py"), "utf8")).toBe('print("hi")\n');
    expect(state.toolChannel).toMatchObject({ mode: "prompt", format: "hermes" });

    const turns = fake.chatBodies({ turnsOnly: true });
    for (const body of turns) {
      expect(body.tools).toBeUndefined();
      expect(systemOf(body)).toHaveLength(1);
      expect(body.messages![0]!.role).toBe("system");
      const system = body.messages![0]!.content;
      for (const t of ALL_TOOLS) {
        expect(count(system, t.description), t.name).toBe(1);
        expect(count(system, `<tool name="${t.name}">`), t.name).toBe(1);
      }
      expect(system).toContain(
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>',
      );
      expect(body.messages!.some((m) => m.role === "tool")).toBe(false);
    }
    const second = turns[1]!.messages!;
    expect(second.at(-2)).toEqual({
      role: "assistant",
      content: expect.stringContaining("<tool_call>"),
    });
    expect(second.at(-1)).toEqual({
      role: "user",
      content:
        '<tool_response name="write_file">\ncreated src/hello.py (12 bytes)\n</tool_response>',
    });
  });

  it("asks for and reads the family's own format (phi4-mini functools)", async () => {
    fake = await startFake({
      models: {
        ...DEFAULT_FAKE_MODELS,
        "phi4-mini:3.8b": { capabilities: ["completion"], family: "phi3" },
      },
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content:
                'functools[{"name": "write_file", "arguments": {"path": "a.txt", "content": "A"}}, {"name": "write_file", "arguments": {"path": "b.txt", "content": "B"}}]',
            }
          : { content: "Both written." },
      ),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create a.txt and b.txt", {
      workspace: ws,
      context: { model: "phi4-mini:3.8b" },
    });
    expect(state.toolChannel).toMatchObject({ mode: "prompt", format: "phi4-mini" });
    expect(fake.chatBodies({ turnsOnly: true })[0]!.messages![0]!.content).toContain(
      'functools[{"name": "read_file"',
    );
    expect(
      readFileSync(path.join(ws, "a.txt"), "utf8") + readFileSync(path.join(ws, "b.txt"), "utf8"),
    ).toBe("AB");
  });

  it("an unparseable attempt goes to recover, which sends the problem and the syntax", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return {
            content: '<tool_call>{"name": "write_file", "arguments": {"path": </tool_call>',
          };
        if (req.turn === 1)
          return {
            content:
              '<tool_call>{"name": "write_file", "arguments": {"path": "x.txt", "content": "ok"}}</tool_call>',
          };
        return { content: "Fixed." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create x.txt", {
      workspace: ws,
      context: { model: "gemma3:4b" },
    });
    const hint = fake.chatBodies({ turnsOnly: true })[1]!.messages!.at(-1)!;
    expect(hint.role).toBe("user");
    expect(hint.content).toMatch(
      /\[keel\] Your last message tried to call a tool, but the call could not be read: <tool_call> must hold JSON/,
    );
    expect(hint.content).toContain("To call a tool, write exactly this form");
    expect(readFileSync(path.join(ws, "x.txt"), "utf8")).toBe("ok");
    expect(state.strikes.unparseable).toBe(1);
  });

  it("never runs a call written inside a thinking block", async () => {
    fake = await startFake({
      script: keelScript(() => ({
        content:
          '<think>I could <tool_call>{"name": "write_file", "arguments": {"path": "no.txt", "content": "x"}}</tool_call></think>Nothing needs to change.',
      })),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "What would you change in this project?", {
      workspace: ws,
      context: { model: "gemma3:4b" },
    });
    expect(existsSync(path.join(ws, "no.txt"))).toBe(false);
    expect(state.status).toBe("done");
    expect(state.summary).toBe("Nothing needs to change.");
  });

  it.each([
    ["Magistral", "[THINK]", "[/THINK]"],
    ["Kimi", "◁think▷", "◁/think▷"],
    ["Seed", "<seed:think>", "</seed:think>"],
    ["Command", "<|START_THINKING|>", "<|END_THINKING|>"],
  ])(
    "%s reasoning: its call is never run and it never reaches the summary",
    async (_d, open, close) => {
      fake = await startFake({
        script: keelScript(() => ({
          content: `${open}I could <tool_call>{"name": "write_file", "arguments": {"path": "no.txt", "content": "x"}}</tool_call> but will not.${close}Nothing needs to change.`,
        })),
      });
      const ws = tempWorkspace();
      const { state } = await runCoder(fake, "What would you change in this project?", {
        workspace: ws,
        context: { model: "gemma3:4b" },
      });
      expect(existsSync(path.join(ws, "no.txt"))).toBe(false);
      expect(state.status).toBe("done");
      expect(state.summary).toBe("Nothing needs to change.");
    },
  );

  it("runs the valid calls of a list with a broken entry and tells the model which one it dropped", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return {
            content:
              '<tool_calls>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "A"}}\n{"name": "write_file", "arguments": {"path": "b.txt", "content": "B"\n{"name": "write_file"}\n</tool_calls>',
          };
        return { content: "Wrote a.txt." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create a.txt with A and b.txt with B", {
      workspace: ws,
      context: { model: "gemma3:4b" },
    });
    expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("A");
    expect(existsSync(path.join(ws, "b.txt"))).toBe(false);
    expect(state.status).toBe("done");
    const second = fake.chatBodies({ turnsOnly: true })[1]!.messages!;
    const result = second.at(-1)!.content;
    expect(result).toContain("keel could not read 2 other entries of your tool-call list");
    expect(result).toContain(
      '{"name": "write_file", "arguments": {"path": "b.txt", "content": "B" (not valid JSON)',
    );
    expect(result).toContain('{"name":"write_file"} (no "arguments" for write_file)');
    expect(result).toContain("created a.txt");
  });
});

describe("native mode", () => {
  it("sends tools once in the tools field and never in the system prompt", async () => {
    fake = await startFake({ script: keelScript(() => ({ content: "Hello." })) });
    await runCoder(fake, "hello", { workspace: tempWorkspace() });
    const [body] = fake.chatBodies({ turnsOnly: true });
    expect(systemOf(body!)).toHaveLength(1);
    const system = body!.messages![0]!.content;
    for (const t of ALL_TOOLS) expect(system).not.toContain(t.description);
    expect(system).not.toContain('"properties"');
    const names = body!.tools!.map((t) => t.function.name);
    expect(new Set(names).size).toBe(names.length);
    for (const t of body!.tools!)
      expect(t).toMatchObject({ type: "function", function: { parameters: { type: "object" } } });
  });

  it("salvages a JSON call written in content by a tools-capable model", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content:
                '{"name": "write_file", "arguments": {"path": "s.txt", "content": "salvaged"}}',
            }
          : { content: "Done." },
      ),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create s.txt", { workspace: ws });
    expect(readFileSync(path.join(ws, "s.txt"), "utf8")).toBe("salvaged");
    expect(state.trail).toMatchObject([{ name: "write_file", ok: true }]);
    const echo = fake.chatBodies({ turnsOnly: true })[1]!.messages!;
    const assistant = echo.find((m) => m.role === "assistant")!;
    expect(assistant.tool_calls?.[0]?.function).toMatchObject({
      name: "write_file",
      arguments: { path: "s.txt", content: "salvaged" },
    });
    expect(echo.at(-1)).toMatchObject({
      role: "tool",
      tool_name: "write_file",
      tool_call_id: assistant.tool_calls![0]!.id,
    });
  });

  it("does not salvage a call to a tool that was not offered", async () => {
    fake = await startFake({
      script: keelScript(() => ({
        content: '{"name": "write_file", "arguments": {"path": "n.txt", "content": "x"}}',
      })),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Explain what write_file would do", { workspace: ws });
    // a question (chat): the read-only toolset, without write_file
    expect(state.intent?.intent).toBe("chat");
    expect(
      fake.chatBodies({ turnsOnly: true })[0]!.tools!.map((t) => t.function.name),
    ).not.toContain("write_file");
    expect(existsSync(path.join(ws, "n.txt"))).toBe(false);
    expect(state.trail).toEqual([]);
  });

  it("probes /api/show once per model, not once per turn", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn < 3 ? calls(call("list_dir", { path: `d${req.turn}` })) : { content: "ok" },
      ),
    });
    await runCoder(fake, "Analyze the folders", { workspace: tempWorkspace() });
    expect(fake.requests.filter((r) => r.path.endsWith("/api/show"))).toHaveLength(1);
  });
});
