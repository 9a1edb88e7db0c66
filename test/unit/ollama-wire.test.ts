import { describe, expect, it } from "vitest";
import { classifyModelError, ProtocolError } from "../../src/models/errors.js";
import { addToolIdentity, repairResponseLine } from "../../src/models/ollama/fetch.js";
import { keptRaw, withServerCallIds } from "../../src/models/reply-facts.js";
import type { WireFacts } from "../../src/models/wire.js";

describe("addToolIdentity", () => {
  it("pairs tool messages with the preceding assistant's calls by order", () => {
    const msgs = addToolIdentity([
      { role: "user" },
      {
        role: "assistant",
        tool_calls: [
          { id: "a", function: { name: "read_file" } },
          { id: "b", function: { name: "list_dir" } },
        ],
      },
      { role: "tool" },
      { role: "tool" },
      { role: "user" },
      { role: "tool" },
    ]);
    expect(
      msgs.map((m) => [
        m.role,
        "tool_name" in m ? m.tool_name : undefined,
        "tool_call_id" in m ? m.tool_call_id : undefined,
      ]),
    ).toEqual([
      ["user", undefined, undefined],
      ["assistant", undefined, undefined],
      ["tool", "read_file", "a"],
      ["tool", "list_dir", "b"],
      ["user", undefined, undefined],
      ["tool", undefined, undefined],
    ]);
  });
});

describe("repairResponseLine", () => {
  it("keeps string arguments as text (ChatOllama drops such a call), unparsed: the one pass reads them", () => {
    const line = JSON.stringify({
      message: {
        role: "assistant",
        content: "",
        tool_calls: [
          { function: { name: "f", arguments: '{"a":1}' } },
          { function: { name: "g", arguments: "not json" } },
          { function: { name: "h", arguments: { b: 2 } } },
        ],
      },
      done: false,
    });
    const calls = (
      JSON.parse(repairResponseLine(line)) as {
        message: { tool_calls: Array<{ function: { arguments: unknown } }> };
      }
    ).message.tool_calls;
    expect(calls.map((c) => c.function.arguments)).toEqual([
      keptRaw('{"a":1}'),
      keptRaw("not json"),
      { b: 2 },
    ]);
  });
  it("notes the server's call ids, which ChatOllama replaces, and gives them back to the reply", () => {
    const facts: WireFacts = {};
    const line = (calls: unknown[]) =>
      JSON.stringify({ message: { role: "assistant", content: "", tool_calls: calls } });
    repairResponseLine(line([{ id: "call_a1", function: { name: "f", arguments: {} } }]), facts);
    repairResponseLine(line([{ function: { name: "g", arguments: "{}" } }]), facts);
    expect(facts.callIds).toEqual(["call_a1", undefined]);
    const reply = { tool_calls: [{ id: "uuid-1" }, { id: "uuid-2" }] };
    expect(withServerCallIds(reply, facts).tool_calls).toEqual([
      { id: "call_a1" },
      { id: "uuid-2" },
    ]);
    // calls the client library did not keep every one of: nothing to pair them by
    expect(withServerCallIds({ tool_calls: [{ id: "u" }] }, facts).tool_calls).toEqual([
      { id: "u" },
    ]);
  });
  it("leaves other lines alone and notes the reply's done_reason in the call's facts", () => {
    const plain = '{"message":{"role":"assistant","content":"hi"},"done":false}';
    expect(repairResponseLine(plain)).toBe(plain);
    const facts: WireFacts = {};
    const last = '{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length"}';
    expect(repairResponseLine(last, facts)).toBe(last);
    expect(facts).toEqual({ finishReason: "length" });
  });
});

describe("classifyModelError", () => {
  it.each([
    [
      { name: "ResponseError", status_code: 404, message: "model 'x' not found" },
      "model_missing",
      false,
    ],
    [{ name: "ResponseError", status_code: 503, message: "server busy" }, "overloaded", true],
    [
      { name: "ResponseError", status_code: 400, message: "does not support tools" },
      "no_tools",
      false,
    ],
    [
      {
        name: "ResponseError",
        status_code: 500,
        message:
          'error parsing tool call: raw=\'{"name": "write_file", "arguments": {"path": "a.py"\', err=unexpected end of JSON input',
      },
      "tool_parse",
      false,
    ],
    [
      new Error("XML syntax error on line 14: element <parameter> closed by </function>"),
      "tool_parse",
      false,
    ],
    [
      { name: "ResponseError", status_code: 400, message: "invalid tool definition" },
      "bad_request",
      false,
    ],
    [
      Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } }),
      "unreachable",
      true,
    ],
    [new Error("Did not receive done or success response in stream."), "dropped", true],
    [
      Object.assign(new TypeError("terminated"), { cause: { code: "UND_ERR_SOCKET" } }),
      "dropped",
      true,
    ],
    [
      Object.assign(new Error("no response within 10 ms"), { name: "ModelTimeoutError" }),
      "timeout",
      true,
    ],
    // Another web server's page is no passing failure; a proxy's page for a restarting server is.
    [{ name: "ResponseError", status_code: 501, message: PAGE }, "protocol", false],
    [{ name: "ResponseError", status_code: 404, message: PAGE }, "protocol", false],
    [{ name: "ResponseError", status_code: 502, message: PAGE }, "overloaded", true],
    [new ProtocolError("GET /api/tags answered 404: no Ollama API at this URL"), "protocol", false],
  ])("%o → %s", (err, kind, retryable) => {
    expect(classifyModelError(err)).toMatchObject({ kind, retryable });
  });

  it("tells of a web page by its text, without the markup", () => {
    expect(
      classifyModelError({ name: "ResponseError", status_code: 501, message: PAGE }).message,
    ).toBe(
      'HTTP 501, a web page ("Error response Error response Error code: 501"), not a model server\'s reply',
    );
  });
});

const PAGE =
  '<!DOCTYPE HTML>\n<html lang="en">\n<head><meta charset="utf-8"><title>Error response</title>\n<style>p { color: red }</style></head>\n<body><h1>Error response</h1>\n<p>Error code: 501</p></body>\n</html>\n';
