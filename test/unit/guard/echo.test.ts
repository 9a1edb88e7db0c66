import { describe, expect, it } from "vitest";
import { ECHO_SPAN, echoWatch } from "../../../src/guard/echo.js";
import { TOOLS_IN_PROMPT } from "../../../src/coder/turn/tool-prompt.js";
import { toolDefinition, toolsForIntent } from "../../../src/tools/registry.js";

const block = TOOLS_IN_PROMPT(toolsForIntent("build", [], false).map(toolDefinition), "hermes");

describe("echoWatch: a reply that copies keel's tool instructions", () => {
  const watch = echoWatch(block);

  it("is found once the reply's last 300 characters stand in them, however re-spaced", () => {
    expect(block.length).toBeGreaterThan(3 * ECHO_SPAN);
    const copy = `Sure.\n${block.slice(0, 2 * ECHO_SPAN)}`;
    expect(watch(copy)).toBe(block.slice(ECHO_SPAN, ECHO_SPAN + 80).replace(/\s+/g, " "));
    const respaced = `Sure.\n${block.slice(0, 2 * ECHO_SPAN).replace(/\n/g, "\n    ")}`;
    expect(watch(respaced)).toBeDefined();
  });

  it("not before 300 characters of it, nor a call in the form it asks for", () => {
    expect(watch(`Sure.\n${block.slice(0, ECHO_SPAN - 20)}`)).toBeUndefined();
    const call = `<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>`;
    expect(block).toContain('"path": "README.md"');
    expect(watch(`I will read it.\n${call}\n${call}`)).toBeUndefined();
  });

  it("not the same words in another order, nor prose about the tools", () => {
    const words = block.slice(0, 2 * ECHO_SPAN).split(/\s+/);
    expect(watch(words.reverse().join(" "))).toBeUndefined();
    const prose =
      "I will use read_file to read the file, then write_file to write the new content, and run_command to run the tests. ".repeat(
        6,
      );
    expect(watch(prose)).toBeUndefined();
  });

  it("nothing to copy: instructions shorter than the span", () => {
    expect(echoWatch("short")("short ".repeat(200))).toBeUndefined();
  });
});
