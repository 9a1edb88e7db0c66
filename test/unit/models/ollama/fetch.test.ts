/** keel's fetch for Ollama: tool messages paired with their calls, and the reply's lines repaired. */
import { describe, expect, it } from "vitest";
import { addToolIdentity, repairResponseLine } from "../../../../src/models/ollama/fetch.js";
import { keptRaw, withServerCallIds } from "../../../../src/models/reply-facts.js";
import type { WireFacts } from "../../../../src/models/wire.js";

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
