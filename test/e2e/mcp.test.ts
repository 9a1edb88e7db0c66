/**
 * Tools from MCP servers under keel's guards, through the keel command: a stdio server named in
 * `.mcp.json` (the tiny test server, which records every call it receives) is started in the OS
 * sandbox, its tools offered; a wrong argument type never reaches it; `isError` results and timeouts
 * reach the model as tool errors and the run finishes; a server that cannot start is named; `keel
 * mcp` lists servers, tools and their token cost.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runKeel } from "../support/cli.js";
import {
  call,
  calls,
  fakeOllamaPerTest,
  keelScript,
  lastResult,
  tempWorkspace,
} from "../support/harness.js";

const startFake = fakeOllamaPerTest();
// Approvals go to the user's settings folder: this file's own, never the real one.
process.env.XDG_CONFIG_HOME = tempWorkspace("keel-config-");
const SERVER = path.resolve(import.meta.dirname, "../support/mcp-server.mjs");

/** A person approves every server of a workspace's .mcp.json, answering yes at the prompt. */
async function approve(ws: string, ...names: string[]) {
  const r = await runKeel(["mcp", "approve", ...names, "-w", ws], { input: "y\ny\ny\n" });
  expect(r.code, r.stderr).toBe(0);
  return r;
}

/** A workspace whose .mcp.json names the test server; the log of calls it received. */
function workspace(extra: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const ws = tempWorkspace();
  const log = path.join(ws, "mcp-calls.log");
  writeFileSync(
    path.join(ws, ".mcp.json"),
    JSON.stringify({
      mcpServers: {
        calc: {
          command: process.execPath,
          args: [SERVER],
          env: { MCP_LOG: log, ...env },
          ...extra,
        },
      },
    }),
  );
  const calls = () =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l) as { tool: string; args: unknown })
      : [];
  return { ws, calls };
}

const run = (ws: string, url: string, ...flags: string[]) =>
  runKeel([
    "run",
    "Create total.txt with the sum of 2 and 3",
    "-w",
    ws,
    "--ollama-url",
    url,
    "--checkpoints",
    "memory",
    "--json",
    ...flags,
  ]);

describe("MCP tools", () => {
  it("a wrong type gets field feedback and never reaches the server; the corrected call runs", async () => {
    const fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("add", { a: "two", b: 3 }));
        if (req.turn === 1) return calls(call("add", { a: 2, b: 3 }));
        if (req.turn === 2)
          return calls(call("write_file", { path: "total.txt", content: lastResult(req) }));
        return { content: "total.txt holds 5." };
      }),
    });
    const { ws, calls: received } = workspace();
    await approve(ws);
    const r = await run(ws, fake.url, "--yes");
    expect(r.code, r.stderr).toBe(0);
    expect(received()).toEqual([{ tool: "add", args: { a: 2, b: 3 } }]);
    expect(readFileSync(path.join(ws, "total.txt"), "utf8")).toBe("5");
    expect(r.stderr).toMatch(/mcp\s+4 MCP tools, ~\d+ tokens of schema \(\d+% of the window\)/);
    const turns = fake.chatBodies({ turnsOnly: true });
    expect(turns[0]!.tools!.map((t) => t.function.name)).toContain("add");
    const feedback = turns[1]!.messages!.filter((m) => m.role === "tool").at(-1)!.content;
    expect(feedback).toMatch(/invalid_arguments.*a: expected number, received string/);
  });

  it("isError and a timeout reach the model as tool errors, and the run finishes", async () => {
    const fake = await startFake({
      script: keelScript((req) => {
        if (req.turn === 0) return calls(call("always_fails", { value: "x" }));
        if (req.turn === 1) return calls(call("slow", { ms: 5000 }));
        if (req.turn === 2) return calls(call("write_file", { path: "total.txt", content: "5" }));
        return { content: "Done despite the database." };
      }),
    });
    const { ws, calls: received } = workspace({ timeout: 800 });
    await approve(ws);
    const r = await run(ws, fake.url, "--yes");
    expect(r.code, r.stderr).toBe(0);
    const results = fake
      .chatBodies({ turnsOnly: true })
      .at(-1)!
      .messages!.filter((m) => m.role === "tool")
      .map((m) => m.content);
    expect(results[0]).toMatch(/Error \[failed\]: always_fails \(MCP\) failed: database is locked/);
    expect(results[1]).toMatch(/Error \[timeout\]: slow \(MCP\) did not answer within 800 ms/);
    expect(received().map((c) => c.tool)).toEqual(["always_fails", "slow"]);
  });

  it("without --yes and nobody to ask, an MCP call is refused with how to allow it", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0 ? calls(call("add", { a: 2, b: 3 })) : { content: "Could not add." },
      ),
    });
    const { ws, calls: received } = workspace();
    await approve(ws, "calc");
    await run(ws, fake.url);
    expect(received()).toEqual([]);
    const told = fake.chatBodies({ turnsOnly: true })[1]!.messages!.find((m) => m.role === "tool")!;
    expect(told.content).toMatch(/needs_approval.*--yes.*"trust": true in the user settings/s);
  });

  it("a server that cannot start is named with its command and stderr; the run goes on", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "total.txt", content: "5" }))
          : { content: "Done." },
      ),
    });
    const { ws } = workspace({}, { MCP_FAIL_START: "/var/lib/secret.db" });
    await approve(ws);
    const r = await run(ws, fake.url, "--yes");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /mcp\s+server "calc" \(.*mcp-server\.mjs\) is not available: .*cannot open \/var\/lib\/secret\.db/,
    );
  });

  it("a streamable HTTP server: its tools are listed and called", async () => {
    const ws = tempWorkspace();
    const log = path.join(ws, "http-calls.log");
    const child = spawn(process.execPath, [SERVER, "--http", "0"], {
      env: { ...process.env, MCP_LOG: log },
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          const m = /listening (\d+)/.exec(d.toString());
          if (m) resolve(Number(m[1]));
        });
        child.on("exit", () => reject(new Error("the HTTP MCP server exited")));
      });
      writeFileSync(
        path.join(ws, ".mcp.json"),
        JSON.stringify({ mcpServers: { web: { url: `http://127.0.0.1:${port}/mcp` } } }),
      );
      await approve(ws);
      const listed = await runKeel(["mcp", "-w", ws, "--json"]);
      expect(JSON.parse(listed.stdout)).toMatchObject({
        servers: [
          { name: "web", sandboxed: false, tools: ["add", "lookup_user", "always_fails", "slow"] },
        ],
      });
      const fake = await startFake({
        script: keelScript((req) =>
          req.turn === 0
            ? calls(call("lookup_user", { id: "7" }))
            : { content: "User 7 is user7." },
        ),
      });
      const r = await runKeel([
        "run",
        "What is the name of user 7?",
        "-w",
        ws,
        "--ollama-url",
        fake.url,
        "--checkpoints",
        "memory",
        "--yes",
        "--json",
      ]);
      expect(r.code, r.stderr).toBe(0);
      // a read-only MCP tool is offered to a question; "7" → 7: the schema says integer, so keel repaired it (and said so) before the server saw it
      expect(readFileSync(log, "utf8")).toContain('{"tool":"lookup_user","args":{"id":7}}');
      const told = fake
        .chatBodies({ turnsOnly: true })[1]!
        .messages!.find((m) => m.role === "tool")!;
      expect(told.content).toMatch(/keel repaired the call.*\{"id":7,"name":"user7"\}/s);
    } finally {
      child.kill();
    }
  });

  it("keel mcp lists the servers, their tools and the tokens they cost", async () => {
    const { ws } = workspace();
    await approve(ws);
    const r = await runKeel(["mcp", "-w", ws, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      servers: Array<{ name: string; tools: string[]; sandboxed: boolean; tokens: number }>;
    };
    expect(report.servers[0]).toMatchObject({
      name: "calc",
      tools: ["add", "lookup_user", "always_fails", "slow"],
      sandboxed: true,
    });
    const text = await runKeel(["mcp", "-w", ws]);
    expect(text.stdout).toMatch(/calc .* sandboxed · 4 tools · ~\d+ tokens/);
    expect(text.stdout).toMatch(/MCP tools take ~\d+ tokens of the 16384-token window/);
  });
});

describe("project MCP servers need a person's approval", () => {
  it("an unapproved server does not start; the run says how to approve it; a changed entry asks again", async () => {
    const fake = await startFake({
      script: keelScript((req) =>
        req.turn === 0
          ? calls(call("write_file", { path: "total.txt", content: "5" }))
          : { content: "total.txt holds 5." },
      ),
    });
    const { ws } = workspace();
    const r = await run(ws, fake.url, "--yes");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json?.mcp_unapproved).toEqual({ servers: ["calc"], approve: "keel mcp approve calc" });
    expect(r.stderr).toMatch(
      /mcp .*no person approved \(calc\): not started.*keel mcp approve calc/,
    );
    const tools = fake.chatBodies({ turnsOnly: true })[0]!.tools ?? [];
    expect(tools.map((t) => t.function.name)).not.toContain("add");
    expect(existsSync(path.join(ws, "mcp-calls.log"))).toBe(false);

    // the person sees the entry and says no, then yes
    const no = await runKeel(["mcp", "approve", "-w", ws], { input: "n\n" });
    expect(no.stderr).toMatch(
      /server "calc":\n {2}runs: .*mcp-server\.mjs[\s\S]*not approved: "calc"/,
    );
    expect((await runKeel(["mcp", "-w", ws, "--json"])).json?.unapproved).toEqual(["calc"]);
    // input that ends before an answer (a closed pipe, Ctrl-D) is a no, not a silent exit 13
    const ended = await runKeel(["mcp", "approve", "-w", ws], { input: "" });
    expect(ended.code).toBe(0);
    expect(ended.stderr).toContain('not approved: "calc"');
    await approve(ws);
    expect((await runKeel(["mcp", "-w", ws, "--json"])).json?.unapproved).toEqual([]);
    const approvals = readFileSync(
      path.join(process.env.XDG_CONFIG_HOME!, "keel", "mcp-approved.json"),
      "utf8",
    );
    expect(approvals).toContain(ws);

    // the same name with a different entry is a different server: asked about again
    const mcp = path.join(ws, ".mcp.json");
    const entry = JSON.parse(readFileSync(mcp, "utf8")) as {
      mcpServers: { calc: { args: string[] } };
    };
    entry.mcpServers.calc.args.push("--extra");
    writeFileSync(mcp, JSON.stringify(entry));
    expect((await runKeel(["mcp", "-w", ws, "--json"])).json?.unapproved).toEqual(["calc"]);
  });

  it("an entry's env applies inside the sandbox only: BASH_ENV and PATH never reach the launcher", async () => {
    const root = tempWorkspace("keel-mcp-env-");
    const pwned = path.join(root, "pwned");
    const evil = path.join(root, "evil.sh");
    writeFileSync(evil, `touch ${pwned}\n`);
    const { ws, calls: received } = workspace(
      {},
      { BASH_ENV: evil, ENV: evil, PATH: `${root}:/usr/bin:/bin`, LD_PRELOAD: "" },
    );
    await approve(ws);
    const r = await runKeel(["mcp", "-w", ws, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json?.servers).toMatchObject([{ name: "calc", sandboxed: true }]);
    expect(existsSync(pwned)).toBe(false);
    expect(received()).toEqual([]);
  });
});
