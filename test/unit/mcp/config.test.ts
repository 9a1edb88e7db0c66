/** MCP configuration, pure: the mcpServers shape, tool names, and schemas local servers accept. */
import { describe, expect, it } from "vitest";
import { parseMcpJson, schemaForModel, toolNameFor, toolWanted } from "../../../src/mcp/config.js";

describe("parseMcpJson", () => {
  it("reads stdio and HTTP servers with defaults; a repository cannot trust its own servers", () => {
    const servers = parseMcpJson(
      ".mcp.json",
      JSON.stringify({
        mcpServers: {
          fs: {
            command: "npx",
            args: ["-y", "@modelcontextprotocol/server-filesystem"],
            trust: true,
          },
          web: { url: "http://127.0.0.1:9000/mcp", headers: { Authorization: "Bearer x" } },
        },
      }),
    );
    expect(servers.fs).toMatchObject({ command: "npx", trust: false, timeout: 60_000, env: {} });
    expect(servers.web).toMatchObject({ url: "http://127.0.0.1:9000/mcp", trust: false });
  });
  it.each([
    ["{", /\.mcp\.json: not valid JSON/],
    [JSON.stringify({ mcpServers: { a: {} } }), /mcpServers\.a: give either command .* or url/],
    [JSON.stringify({ mcpServers: { a: { command: "x", url: "http://h" } } }), /give either/],
    [JSON.stringify({ mcpServers: { a: { command: "x", timout: 5 } } }), /mcpServers\.a: .*timout/],
    [JSON.stringify({ mcpServers: { a: { command: "x", args: "y" } } }), /mcpServers\.a\.args:/],
  ])("%s → a clear error", (text, message) => {
    expect(() => parseMcpJson(".mcp.json", text)).toThrow(message);
  });
  it("no mcpServers → none", () => {
    expect(parseMcpJson(".mcp.json", "{}")).toEqual({});
  });
});

describe("tool names", () => {
  it("safe characters; server__tool when the name is taken", () => {
    const taken = new Set(["read_file", "search"]);
    expect(toolNameFor("gh", "create.issue", taken)).toBe("create_issue");
    expect(toolNameFor("docs", "search", taken)).toBe("docs__search");
    expect(toolNameFor("fs", "read_file", taken)).toBe("fs__read_file");
    expect(toolNameFor("s", "x".repeat(80), taken)).toHaveLength(64);
  });
  it("include and exclude lists", () => {
    const base = { excludeTools: ["rm"] } as unknown as Parameters<typeof toolWanted>[0];
    expect(toolWanted(base, "ls")).toBe(true);
    expect(toolWanted(base, "rm")).toBe(false);
    expect(toolWanted({ ...base, includeTools: ["ls"] }, "cat")).toBe(false);
  });
});

describe("schemaForModel", () => {
  it("resolves local $refs, drops keywords grammars reject, fills a missing type", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        owner: { $ref: "#/$defs/Name" },
        repo: { type: "string", pattern: "^[a-z]+$", format: "hostname" },
        labels: { items: { type: "string" } },
        anything: {},
      },
      required: ["owner"],
      $defs: { Name: { type: "string", minLength: 1, description: "a GitHub login" } },
    };
    expect(schemaForModel(schema)).toEqual({
      type: "object",
      properties: {
        owner: { type: "string", minLength: 1, description: "a GitHub login" },
        repo: { type: "string" },
        labels: { items: { type: "string" }, type: "array" },
        anything: { type: "string" },
      },
      required: ["owner"],
    });
  });
  it("a schema without properties is still an object", () => {
    expect(schemaForModel(undefined)).toEqual({ type: "object", properties: {} });
  });
});
