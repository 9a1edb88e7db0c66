/**
 * MCP tools in the graph itself — what Studio, the LangGraph server and `runAgent` run — with the
 * settings' `mcpServers` (not only the CLI's): the tool is offered, called, its result fed back, and
 * the timeline reports the tools' share of the window.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closeMcp } from "../../src/mcp/session.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  lastResult,
  runCoder,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();
const SERVER = path.resolve(import.meta.dirname, "../support/mcp-server.mjs");
afterAll(closeMcp);

describe("MCP tools in the graph", () => {
  it("a server from the run settings: offered, called with a repaired argument, result fed back", async () => {
    const ws = tempWorkspace();
    const log = path.join(ws, "calls.log");
    const fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("add", { a: "2", b: 40 }));
        if (req.turn === 1)
          return calls(call("write_file", { path: "answer.txt", content: lastResult(req) }));
        return { content: "answer.txt holds 42." };
      }),
    });
    const { state } = await runCoder(fake, "Create answer.txt with 2 + 40", {
      workspace: ws,
      context: {
        autoApprove: true,
        mcpServers: { calc: { command: process.execPath, args: [SERVER], env: { MCP_LOG: log } } },
      },
    });
    expect(state.status).toBe("done");
    expect(readFileSync(log, "utf8").trim()).toBe('{"tool":"add","args":{"a":2,"b":40}}');
    expect(readFileSync(path.join(ws, "answer.txt"), "utf8")).toMatch(/42$/);
    const offered = fake.chatBodies({ turnsOnly: true })[0]!.tools!.map((t) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(["write_file", "add", "lookup_user"]));
  });
});
