#!/usr/bin/env node
/**
 * A tiny MCP server for tests (stdio, or streamable HTTP with `--http PORT`): a few tools that behave
 * like real ones (a sum, a lookup with typed fields, one that fails with isError, one that is slow),
 * and a record of every call it received, one JSON line per call, in the file named by `MCP_LOG`.
 * Built on the MCP SDK's own server, as a real MCP server would be.
 */
import { Buffer } from "node:buffer";
import { appendFileSync } from "node:fs";
import { setTimeout } from "node:timers/promises";
import { createServer } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const record = (tool, args) => {
  if (process.env.MCP_LOG)
    appendFileSync(process.env.MCP_LOG, `${JSON.stringify({ tool, args })}\n`);
};
const text = (t) => ({ content: [{ type: "text", text: t }] });
// Tests that check the server is gone after a run read its pid here.
if (process.env.MCP_PID_FILE) appendFileSync(process.env.MCP_PID_FILE, `${process.pid}\n`);

function build() {
  const server = new McpServer({ name: "keel-test-mcp", version: "1.0.0" });
  server.registerTool(
    "add",
    {
      description: "Add two numbers",
      inputSchema: { a: z.number().describe("first"), b: z.number().describe("second") },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      record("add", args);
      return text(String(args.a + args.b));
    },
  );
  server.registerTool(
    "lookup_user",
    {
      description: "Look up a user by numeric id",
      inputSchema: { id: z.number().int(), verbose: z.boolean().optional() },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      record("lookup_user", args);
      return text(JSON.stringify({ id: args.id, name: `user${args.id}` }));
    },
  );
  server.registerTool(
    "always_fails",
    {
      description: "Write to the database (always fails here)",
      inputSchema: { value: z.string() },
    },
    async (args) => {
      record("always_fails", args);
      return { ...text("database is locked"), isError: true };
    },
  );
  server.registerTool(
    "slow",
    { description: "Wait for ms milliseconds", inputSchema: { ms: z.number() } },
    async (args) => {
      record("slow", args);
      await setTimeout(args.ms);
      return text("slept");
    },
  );
  return server;
}

const httpAt = process.argv.indexOf("--http");
if (httpAt > 0) {
  const port = Number(process.argv[httpAt + 1] ?? 0);
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = build();
    res.on("close", () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  http.listen(port, "127.0.0.1", () => console.log(`listening ${http.address().port}`));
} else {
  if (process.env.MCP_FAIL_START) {
    console.error(`cannot open ${process.env.MCP_FAIL_START}: permission denied`);
    process.exit(1);
  }
  await build().connect(new StdioServerTransport());
}
