/**
 * F1–F8 of docs/DESIGN.md, each through the compiled coder graph against the fake Ollama server, with
 * a scripted model that makes the mistake and corrects it only when keel feeds the error back.
 * Every test asserts effects: files on disk, the requests the server received, the tool trail.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { SUMMARY_REQUEST } from "../../src/guard/ladder.js";
import type { FakeOllama } from "../../src/testing/fake-ollama/index.js";
import {
  call,
  calls,
  keelScript,
  lastMessage,
  lastResult,
  runCoder,
  fakeOllamaPerTest,
  tempWorkspace,
  toolMessages,
} from "../support/harness.js";

let fake: FakeOllama | undefined;
const startFake = fakeOllamaPerTest();

const FIFTY_LINES = Array.from({ length: 50 }, (_, i) => `print("line ${i}")`).join("\n");

describe("F1: file writes through the shell", () => {
  it("refuses echo-redirection before spawning, tells the model to use write_file, and the file then exists", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return calls(call("run_command", { command: `echo "${FIFTY_LINES}" > f.py` }));
        if (lastResult(req).includes("call write_file"))
          return calls(call("write_file", { path: "f.py", content: FIFTY_LINES }));
        return { content: "Wrote f.py." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create f.py that prints fifty lines", {
      workspace: ws,
    });

    const turns = fake.chatBodies({ turnsOnly: true });
    const refusal = toolMessages(turns[1])[0]!;
    expect(refusal.tool_name).toBe("run_command");
    expect(refusal.content).toMatch(/redirection .*refused.*call write_file/s);
    expect(readFileSync(path.join(ws, "f.py"), "utf8")).toBe(FIFTY_LINES);
    expect(state.status).toBe("done");
    expect(state.trail.map((t) => [t.name, t.ok])).toEqual([
      ["run_command", false],
      ["write_file", true],
    ]);
  });

  it("refuses an oversize command without spawning it", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(
              call("run_command", {
                command: `node -e "${"x".repeat(20_000)}"; touch spawned.txt`,
              }),
            )
          : { content: "ok" },
      ),
    });
    const ws = tempWorkspace();
    await runCoder(fake, "Run the generator", { workspace: ws });
    const msg = toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!;
    expect(msg.content).toMatch(/characters long; run_command accepts at most \d+/);
    expect(existsSync(path.join(ws, "spawned.txt"))).toBe(false);
  });
});

describe("F2: creating a file with a create-directory tool", () => {
  it("make_dir refuses a path with an extension, creates nothing, and write_file then creates the file", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("make_dir", { path: "src/api/users.js" }));
        if (lastResult(req).includes("looks like a file name"))
          return calls(
            call("write_file", { path: "src/api/users.js", content: "export default [];\n" }),
          );
        return { content: "Created src/api/users.js." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create src/api/users.js", { workspace: ws });
    const refusal = toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!;
    expect(refusal).toMatchObject({ tool_name: "make_dir" });
    expect(refusal.content).toContain('call write_file with path "src/api/users.js"');
    expect(statSync(path.join(ws, "src/api/users.js")).isFile()).toBe(true);
    expect(readFileSync(path.join(ws, "src/api/users.js"), "utf8")).toBe("export default [];\n");
    expect(state.filesWritten).toEqual(["src/api/users.js"]);
  });

  it("write_file without content is refused and writes nothing", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("write_file", { path: "a.txt" })) : { content: "gave up" },
      ),
    });
    const ws = tempWorkspace();
    await runCoder(fake, "Create a.txt", { workspace: ws, context: { maxTurns: 2 } });
    expect(toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!.content).toMatch(
      /content: expected string, received nothing/,
    );
    expect(existsSync(path.join(ws, "a.txt"))).toBe(false);
  });
});

describe("F3: build vs analyze", () => {
  it("routes a build request to build: write tools offered, the prompt says build, the file is created", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("analyze_code", { path: "src/api" }));
        if (lastResult(req).includes("does not exist"))
          return calls(call("write_file", { path: "src/api/users.js", content: "// users\n" }));
        return { content: "Built the endpoint." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(
      fake,
      "Build a REST API endpoint with these specifications:\n- GET /users\n- JSON",
      { workspace: ws },
    );
    expect(state.intent).toMatchObject({ intent: "build", source: "rules" });
    const [first, second] = fake.chatBodies({ turnsOnly: true });
    expect(first!.tools!.map((t) => t.function.name)).toContain("write_file");
    expect(first!.messages![0]!.content).toContain("BUILD request");
    expect(toolMessages(second)[0]!.content).toMatch(
      /src\/api does not exist\. To create it, call write_file/,
    );
    expect(existsSync(path.join(ws, "src/api/users.js"))).toBe(true);
  });

  it('treats "explain how to build X" as a question, not a build: read-only tools only, prose is the answer', async () => {
    fake = await startFake({
      script: keelScript(() => ({ content: "You would write a handler that..." })),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Explain how to build a REST API endpoint in Express", {
      workspace: ws,
    });
    // general knowledge: nothing in the workspace is involved (issue 13), so chat, never build
    expect(state.intent?.intent).toBe("chat");
    expect(state.status).toBe("done");
    const names = fake.chatBodies({ turnsOnly: true })[0]!.tools!.map((t) => t.function.name);
    expect(names).not.toContain("write_file");
    expect(names).not.toContain("run_command");
    expect(names).toContain("read_file");
  });

  it("asks the model to classify when the rules are unsure", async () => {
    fake = await startFake({
      script: keelScript(() => ({ content: "Here is the answer." }), { intent: "chat" }),
    });
    const { state } = await runCoder(fake, "the thing with the users table", {
      workspace: tempWorkspace(),
    });
    expect(state.intent).toMatchObject({ intent: "chat", source: "model" });
    const intentRequest = fake
      .chatBodies()
      .find((b) => JSON.stringify(b.format ?? "").includes("intent"));
    expect(intentRequest?.tools).toBeUndefined();
  });
});

describe("F4: every result, success or error, goes back to the model", () => {
  it("feeds a tool error into the next request and keeps going until the model answers", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("read_file", { path: "missing.txt" }));
        if (req.turn === 1)
          return calls(call("write_file", { path: "missing.txt", content: "now here" }));
        return { content: "Created it." };
      }),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create missing.txt", { workspace: ws });
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns).toHaveLength(3);
    expect(toolMessages(turns[1])[0]).toMatchObject({ role: "tool", tool_name: "read_file" });
    expect(toolMessages(turns[1])[0]!.content).toContain("missing.txt does not exist");
    expect(readFileSync(path.join(ws, "missing.txt"), "utf8")).toBe("now here");
    expect(state.status).toBe("done");
  });
});

describe("F5: loops", () => {
  it("cuts `.\\src`, `./src`, `src/` at the exact call, then climbs the ladder: re-plan, summary, end", async () => {
    const spellings = [".\\src", "./src", "src/", "src"];
    fake = await startFake({
      script: keelScript((req) => calls(call("list_dir", { path: spellings[req.turn % 4]! }))),
    });
    const ws = tempWorkspace();
    mkdirSync(path.join(ws, "src"));
    const { state } = await runCoder(fake, "Build the app in src", { workspace: ws });
    // calls 1-2 run; call 3 is the first hit (hint instead of a result); 4 and 5 hit again.
    expect(state.trail.map((t) => t.kind ?? "ok")).toEqual(["ok", "ok", "loop", "loop", "loop"]);
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(toolMessages(turns[3])[2]!.content).toMatch(
      /loop detected: you made the same call 3 times in a row: list_dir\(\{"path":"src"\}\), so this call was not run/,
    );
    const plans = fake.chatBodies().filter((b) => JSON.stringify(b.format ?? "").includes("steps"));
    expect(plans).toHaveLength(2);
    expect(plans[1]!.messages!.at(-1)!.content).toMatch(
      /<what_went_wrong>\nrepeat loop on list_dir/,
    );
    const summaryTurn = turns.at(-1)!;
    expect(summaryTurn.tools).toBeUndefined();
    expect(summaryTurn.messages!.at(-1)!.content).toMatch(
      /^\[keel\] The run is being stopped: repeat loop/,
    );
    expect(state.status).toBe("gave_up");
    expect(state.summary).toMatch(
      /Stopped: repeat loop on list_dir[\s\S]*The model's summary: I wrote what I could/,
    );
  });

  it("does not cut exploration of different paths", async () => {
    const dirs = ["src", "src/cli", "src/tui", "src/api", "src/db"];
    fake = await startFake({
      script: keelScript((req) =>
        req.turn < dirs.length
          ? calls(call("list_dir", { path: `./${dirs[req.turn]}` }))
          : { content: "The project has five folders." },
      ),
    });
    const ws = tempWorkspace();
    for (const d of dirs) mkdirSync(path.join(ws, d), { recursive: true });
    const { state } = await runCoder(fake, "Analyze the layout of ./src", { workspace: ws });
    expect(state.status).toBe("done");
    expect(state.trail.every((t) => t.ok)).toBe(true);
    expect(state.trail).toHaveLength(5);
  });

  it("writing the same file with the same content twice in a row is a loop (mutation threshold 2)", async () => {
    fake = await startFake({
      script: keelScript(() => calls(call("write_file", { path: "a.txt", content: "same" }))),
    });
    const { state } = await runCoder(fake, "Create a.txt", { workspace: tempWorkspace() });
    expect(state.trail.map((t) => t.kind ?? "ok")).toEqual(["ok", "loop", "loop", "loop"]);
    expect(state.status).toBe("gave_up");
  });
});

describe("F6: unknown tools and wrong argument types", () => {
  it("answers an unknown tool with the available tools and the closest name; the run goes on", async () => {
    fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0)
          return { ...calls(call("analyzeDom", { path: "." })), allowUnknownTools: true };
        if (req.turn === 1) return calls(call("analyze_code", { path: "app.py" }));
        return { content: "app.py defines main()." };
      }),
    });
    const ws = tempWorkspace();
    await import("node:fs/promises").then((fs) =>
      fs.writeFile(path.join(ws, "app.py"), "def main():\n    pass\n"),
    );
    const { state } = await runCoder(fake, "Analyze app.py", { workspace: ws });
    const msg = toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!;
    expect(msg.content).toMatch(
      /unknown tool "analyzeDom"\. Available tools: read_file, list_dir, glob, grep, analyze_code\. Closest: analyze_code/,
    );
    expect(state.status).toBe("done");
    expect(toolMessages(fake.chatBodies({ turnsOnly: true })[2])[1]!.content).toMatch(
      /function main \(line 1\)/,
    );
  });

  it("names each wrong field with expected and received type", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("read_file", { path: 5, limit: "ten" })) : { content: "ok" },
      ),
    });
    await runCoder(fake, "Analyze the readme", { workspace: tempWorkspace() });
    const text = toolMessages(fake.chatBodies({ turnsOnly: true })[1])[0]!.content;
    expect(text).toContain("path: expected string, received number");
    expect(text).toContain("limit: expected number, received string");
  });
});

describe("F7: empty replies", () => {
  it("nudges the model in its own context, escalating, then re-plans, then a summary turn, then a report", async () => {
    fake = await startFake({
      script: keelScript(() => ({ content: "" }), { summary: "Nothing was done." }),
    });
    const { state } = await runCoder(fake, "Create a.txt", { workspace: tempWorkspace() });
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns).toHaveLength(4);
    expect(turns[3]!.tools).toBeUndefined();
    expect(lastMessage(turns[1])).toMatchObject({
      role: "user",
      content: expect.stringContaining("[keel] Your last reply was empty"),
    });
    // after the re-plan the new plan is the last note; the escalated nudge is just before it
    expect(turns[2]!.messages!.at(-2)!.content).toContain("Your reply was empty again");
    expect(lastMessage(turns[2])!.content).toMatch(/^\[keel\] The plan for this request:/);
    const plans = fake.chatBodies().filter((b) => JSON.stringify(b.format ?? "").includes("steps"));
    expect(plans).toHaveLength(2);
    expect(plans[1]!.messages!.at(-1)!.content).toContain("<what_went_wrong>");
    expect(state.status).toBe("gave_up");
    expect(state.strikes.empty).toBe(3);
    expect(state.summary).toMatch(
      /Stopped: the model replied with nothing[\s\S]*The model's summary: Nothing was done\./,
    );
  });

  it.each([
    [
      "only keel's request echoed back: no model summary",
      (ask: string) => `${ask}\n${ask}\n${ask.slice(0, 60)}`,
      undefined,
    ],
    [
      "its own words kept, keel's request echoed within them taken out",
      (ask: string) => `Nothing was done. ${ask.slice(ask.indexOf("Do not call"))}\n${ask}`,
      "Nothing was done.",
    ],
  ])("a summary turn that echoes keel's request: %s", async (_, reply, own) => {
    const ask = SUMMARY_REQUEST("the model replied with nothing");
    fake = await startFake({
      script: keelScript(() => ({ content: "" }), { summary: reply(ask) }),
    });
    const { state } = await runCoder(fake, "Create a.txt", { workspace: tempWorkspace() });
    expect(state.status).toBe("gave_up");
    expect(state.summary).not.toContain("Do not call any tools");
    if (own) expect(state.summary).toMatch(new RegExp(`The model's summary: ${own}$`));
    else expect(state.summary).not.toContain("The model's summary");
  });

  it("recovers when the model answers after the nudge", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.last?.content.includes("reply was empty")
          ? { content: "Hello! How can I help?" }
          : { content: "" },
      ),
    });
    const { state } = await runCoder(fake, "hello", { workspace: tempWorkspace() });
    expect(state.status).toBe("done");
    expect(state.summary).toBe("Hello! How can I help?");
  });
});

describe("F8: tool results go back paired with their calls", () => {
  it("answers two calls of one reply in order, with ids and names, before the next turn", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(
              call("write_file", { path: "a.txt", content: "A" }),
              call("write_file", { path: "b.txt", content: "B" }),
            )
          : { content: "Wrote both." },
      ),
    });
    const ws = tempWorkspace();
    const { state } = await runCoder(fake, "Create a.txt and b.txt", { workspace: ws });
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns).toHaveLength(2);
    const msgs = turns[1]!.messages!;
    const assistant = msgs.find((m) => m.role === "assistant")!;
    const tools = toolMessages(turns[1]);
    expect(tools.map((t) => t.content)).toEqual([
      "created a.txt (1 bytes)",
      "created b.txt (1 bytes)",
    ]);
    expect(tools.map((t) => t.tool_name)).toEqual(["write_file", "write_file"]);
    expect(tools.map((t) => t.tool_call_id)).toEqual(assistant.tool_calls!.map((c) => c.id));
    expect(msgs.indexOf(tools[0]!)).toBe(msgs.indexOf(assistant) + 1);
    expect(readFileSync(path.join(ws, "a.txt"), "utf8")).toBe("A");
    expect(readFileSync(path.join(ws, "b.txt"), "utf8")).toBe("B");
    expect(state.status).toBe("done");
  });

  it("accepts calls in the final stream line (native placement) and string arguments", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? {
              content: "",
              toolCalls: [call("write_file", JSON.stringify({ path: "n.txt", content: "native" }))],
              placement: "native",
            }
          : { content: "done" },
      ),
    });
    const ws = tempWorkspace();
    await runCoder(fake, "Create n.txt", { workspace: ws });
    expect(readFileSync(path.join(ws, "n.txt"), "utf8")).toBe("native");
  });
});

describe("budgets", () => {
  it("ends the run at the turn budget with a tool-less summary turn and a report", async () => {
    fake = await startFake({
      script: keelScript((req) => calls(call("list_dir", { path: `dir${req.turn}` }))),
    });
    const { state } = await runCoder(fake, "Analyze everything", {
      workspace: tempWorkspace(),
      context: { maxTurns: 3 },
    });
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns).toHaveLength(4);
    expect(turns.slice(0, 3).every((b) => b.tools)).toBe(true);
    expect(turns[3]!.tools).toBeUndefined();
    expect(state.status).toBe("gave_up");
    expect(state.summary).toContain("the turn budget (3 model turns) is spent");
    expect(state.summary).toContain("The model's summary:");
  });

  it("refuses tool calls past the tool-call budget", async () => {
    fake = await startFake({
      script: keelScript((req) =>
        calls(
          call("list_dir", { path: `a${req.turn}` }),
          call("list_dir", { path: `b${req.turn}` }),
        ),
      ),
    });
    const { state } = await runCoder(fake, "Analyze everything", {
      workspace: tempWorkspace(),
      context: { maxToolCalls: 3 },
    });
    expect(state.trail).toHaveLength(4);
    expect(state.trail[3]!.kind).toBe("refused");
    expect(state.status).toBe("gave_up");
    expect(state.summary).toContain("tool-call budget (3 calls) is spent");
  });
});

describe("planning", () => {
  it("a plan that does not validate gets one repair turn: the bad answer and what was wrong with it", async () => {
    let plans = 0;
    fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 || req.messages.every((m) => m.role !== "tool")
          ? calls(call("write_file", { path: "a.txt", content: "a" }))
          : { content: "Done." },
      ),
    });
    fake.onChat((req) => {
      if (req.structured && req.formatKeys.includes("steps") && plans++ === 0)
        fake!.inject({ content: '{"steps": []}' });
    });
    const { state } = await runCoder(fake, "Create a.txt", { workspace: tempWorkspace() });
    const planRequests = fake
      .chatBodies()
      .filter((b) => JSON.stringify(b.format ?? "").includes("steps"));
    expect(planRequests).toHaveLength(2);
    const repair = planRequests[1]!.messages!;
    expect(repair.at(-2)).toMatchObject({ role: "assistant", content: '{"steps": []}' });
    expect(repair.at(-1)!.content).toMatch(/^That answer was not valid: steps: /);
    // the repaired plan is the one the run follows
    expect(state.planSteps.map((s) => s.title)).toEqual(["Do what the request asks"]);
    expect(state.status).toBe("done");
  });
});
