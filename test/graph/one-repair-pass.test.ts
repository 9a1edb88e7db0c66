/**
 * One repair pass for every channel (tools/call-repair.ts): a call with a misnamed field arrives
 * repaired in the conversation — what the server is sent back next turn — whether it came as
 * Ollama's native call (object or string arguments), an OpenAI-compatible server's call whose
 * arguments its client could not parse, or text in prompt mode; the model reads what was repaired
 * with the result. What tool-execute adds to a result is state (`replyNotes`), not a field parked
 * on the message.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it } from "vitest";
import { runConfig } from "../../src/coder/context.js";
import { createCoderGraph } from "../../src/coder/graph.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { startFakeOpenAI, type FakeOpenAI } from "../../src/testing/fake-openai/index.js";
import type { ScriptedCall } from "../../src/testing/fake-ollama/index.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  runCoder,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();
let openai: FakeOpenAI[] = [];
afterEach(async () => {
  const servers = openai;
  openai = [];
  await Promise.all(servers.map((s) => s.close()));
  for (const s of servers) expect(s.violations).toEqual([]);
});

const NOTE = "(keel repaired the call: used file_path as path; used text as content)";
/** The model writes a.txt with two fields misnamed, then answers. */
const sloppy = (first: ScriptedCall) =>
  keelScript((req) => (req.turn === 0 ? calls(first) : { content: "Wrote a.txt." }));

/** What the second model request holds: the model's call as sent back, and the result. */
function secondTurn(bodies: Array<{ messages?: Array<Record<string, unknown>> }>) {
  const messages = bodies[1]!.messages!;
  const assistant = messages.findLast((m) => m.role === "assistant") as {
    tool_calls?: Array<{ function: { name: string; arguments: unknown } }>;
  };
  const tool = messages.findLast((m) => m.role === "tool") as { content: string };
  return { call: assistant.tool_calls?.[0]?.function, result: tool.content };
}

type Run = Awaited<ReturnType<typeof runCoder>>;

/** The notes act left for tool-execute, as the state held them when the call ran. */
async function notesAtExecute({ graph, config }: Pick<Run, "graph" | "config">) {
  for await (const snap of graph.getStateHistory(config))
    if (snap.next.includes("tool-execute"))
      return (snap.values as CoderStateValue).replyNotes ?? undefined;
  return undefined;
}

async function expectRepaired(run: Pick<Run, "state" | "graph" | "config">, ws: string) {
  const { state } = run;
  expect(state.status).toBe("done");
  expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("A");
  const id = state.trail[0]!.id;
  expect(state.trail[0]!.repaired).toBe("used file_path as path; used text as content");
  expect((await notesAtExecute(run))?.[id]).toEqual({
    repaired: "used file_path as path; used text as content",
  });
  // the next turn, with nothing to add, clears them
  expect(state.replyNotes).toBeNull();
}

describe("one repair pass, every channel", () => {
  it.each([
    ["object arguments", call("write_file", { file_path: "a.txt", text: "A" })],
    // a server that sends the arguments as JSON text: the wire keeps it, the pass reads it
    ["string arguments", call("write_file", JSON.stringify({ file_path: "a.txt", text: "A" }))],
  ])("Ollama native, %s: the conversation holds the repaired call", async (_label, first) => {
    const fake = await startFake({ script: sloppy(first) });
    const ws = tempWorkspace();
    const run = await runCoder(fake, "Create a.txt with A", { workspace: ws });
    await expectRepaired(run, ws);
    const next = secondTurn(fake.chatBodies({ turnsOnly: true }) as never);
    expect(next.call).toEqual({
      name: "write_file",
      arguments: { path: "a.txt", content: "A" },
      ...(next.call && "index" in next.call ? { index: 0 } : {}),
    });
    expect(next.result.startsWith(NOTE)).toBe(true);
  });

  it("OpenAI-compatible native, arguments its client could not parse (XML parameters)", async () => {
    const f = await startFakeOpenAI({
      server: "llama.cpp",
      script: sloppy(
        call("write_file", "<parameter=file_path>a.txt</parameter><parameter=text>A</parameter>"),
      ),
    });
    openai.push(f);
    const ws = tempWorkspace();
    const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
    const config = runConfig("pass-openai", {
      provider: "openai",
      baseUrl: f.baseUrl,
      model: "qwen2.5-coder-7b-instruct",
      workspace: ws,
      retryBaseMs: 5,
    });
    const state = (await graph.invoke(
      { messages: [new HumanMessage("Create a.txt with A")] },
      config,
    )) as CoderStateValue;
    await expectRepaired({ state, graph, config }, ws);
    const next = secondTurn(f.chatBodies({ turnsOnly: true }));
    expect(next.call?.name).toBe("write_file");
    expect(JSON.parse(next.call?.arguments as string)).toEqual({ path: "a.txt", content: "A" });
    expect(next.result.startsWith(NOTE)).toBe(true);
  });

  it("prompt mode: a call written as text", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content: `<tool_call>\n${JSON.stringify({ name: "write_file", arguments: { file_path: "a.txt", text: "A" } })}\n</tool_call>`,
            }
          : { content: "Wrote a.txt." },
      ),
    });
    const ws = tempWorkspace();
    const run = await runCoder(fake, "Create a.txt with A", {
      workspace: ws,
      context: { model: "gemma3:4b" },
    });
    await expectRepaired(run, ws);
    const ai = run.state.messages.find((m) => AIMessage.isInstance(m) && m.tool_calls?.length);
    expect((ai as AIMessage).tool_calls![0]!.args).toEqual({ path: "a.txt", content: "A" });
    const result = fake.chatBodies({ turnsOnly: true })[1]!.messages!.at(-1)!.content;
    expect(result).toContain(NOTE);
  });

  it("the entries keel could not read reach the first result from state, not from the message", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content:
                '<tool_calls>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "A"}}\n{"name": "write_file"}\n</tool_calls>',
            }
          : { content: "Wrote a.txt." },
      ),
    });
    const ws = tempWorkspace();
    const run = await runCoder(fake, "Create a.txt with A", {
      workspace: ws,
      context: { model: "gemma3:4b" },
    });
    expect(run.state.status).toBe("done");
    const ai = run.state.messages.find((m): m is AIMessage =>
      Boolean(AIMessage.isInstance(m) && m.tool_calls?.length),
    )!;
    expect(Object.keys(ai.additional_kwargs)).toEqual(["keel_raw_text"]);
    const id = ai.tool_calls![0]!.id!;
    expect((await notesAtExecute(run))?.[id]?.unread).toMatch(/keel could not read 1 other entry/);
    const result = fake.chatBodies({ turnsOnly: true })[1]!.messages!.at(-1)!.content;
    // prompt mode shows results as <tool_response>: the note comes first in it
    expect(result).toMatch(
      /^<tool_response name="write_file">\n\(keel could not read 1 other entry of your tool-call list/,
    );
  });
});
