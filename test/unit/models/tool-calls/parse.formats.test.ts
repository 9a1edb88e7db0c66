/**
 * parseToolCalls against outputs in each family's real format: single and multiple calls, text
 * around calls, thinking blocks, and negatives that must yield no call; and arguments encoded twice.
 */
import { describe, expect, it } from "vitest";
import { parseToolCalls } from "../../../../src/models/tool-calls/index.js";
import { argumentsFromText } from "../../../../src/models/tool-calls/parse.js";

const W = { path: "src/app.py", content: "print('hi')\n" };
const R = { path: "README.md" };

type Case = [
  label: string,
  text: string,
  calls: Array<[string, Record<string, unknown>]>,
  content?: string,
];

const CASES: Record<string, Case[]> = {
  hermes: [
    [
      "one call",
      `<tool_call>\n{"name": "write_file", "arguments": {"path": "src/app.py", "content": "print('hi')\\n"}}\n</tool_call>`,
      [["write_file", W]],
      "",
    ],
    [
      "two calls with text before",
      `I'll read both.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>\n<tool_call>\n{"name": "list_dir", "arguments": {"path": "src"}}\n</tool_call>`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
      "I'll read both.",
    ],
    [
      "thinking first (qwen3)",
      `<think>\nMaybe <tool_call>{"name":"rm","arguments":{}}</tool_call> no.\n</think>\n\n<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>`,
      [["read_file", R]],
    ],
    [
      "unclosed at end of reply",
      `<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}`,
      [["read_file", R]],
      "",
    ],
    [
      "a JSON list inside (granite 3.3 writes this)",
      `<tool_call>[{"name": "read_file", "arguments": {"path": "README.md"}}, {"name": "list_dir", "arguments": {"path": "src"}}]</tool_call>`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
    ],
    [
      "python literals and trailing comma",
      `<tool_call>{"name": "grep", "arguments": {"pattern": "x", "glob": None,},}</tool_call>`,
      [["grep", { pattern: "x", glob: null }]],
    ],
  ],
  "llama3-json": [
    [
      "parameters key",
      `{"name": "read_file", "parameters": {"path": "README.md"}}`,
      [["read_file", R]],
      "",
    ],
    [
      "python_tag and two calls separated by ;",
      `<|python_tag|>{"name": "read_file", "parameters": {"path": "README.md"}}; {"name": "list_dir", "parameters": {"path": "."}}<|eom_id|>`,
      [
        ["read_file", R],
        ["list_dir", { path: "." }],
      ],
      "",
    ],
    [
      "fenced json",
      'Here you go:\n```json\n{"name": "write_file", "arguments": {"path": "src/app.py", "content": "print(\'hi\')\\n"}}\n```',
      [["write_file", W]],
      "Here you go:",
    ],
    [
      "arguments as a JSON string",
      `{"name": "read_file", "arguments": "{\\"path\\": \\"README.md\\"}"}`,
      [["read_file", R]],
    ],
  ],
  mistral: [
    [
      "JSON-array form",
      `[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "README.md"}}, {"name": "list_dir", "arguments": {"path": "src"}}]`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
      "",
    ],
    ["name[ARGS] form", `[TOOL_CALLS]read_file[ARGS]{"path": "README.md"}`, [["read_file", R]], ""],
    [
      "name[ARGS] twice with call ids",
      `[TOOL_CALLS]read_file[CALL_ID]a1b2c3d4e[ARGS]{"path": "README.md"}[TOOL_CALLS]list_dir[ARGS]{"path": "src"}`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
    ],
  ],
  pythonic: [
    [
      "list of calls",
      `[read_file(path="README.md"), list_dir(path='src')]`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
      "",
    ],
    [
      "numbers, booleans, lists",
      `[grep(pattern="TODO", limit=5, recursive=True, globs=["*.ts", "*.js"])]`,
      [["grep", { pattern: "TODO", limit: 5, recursive: true, globs: ["*.ts", "*.js"] }]],
    ],
    [
      "llama 4 python_start",
      `<|python_start|>[read_file(path="README.md")]<|python_end|>`,
      [["read_file", R]],
      "",
    ],
    [
      "on its own line after text",
      `Let me look.\n[list_dir(path=".")]`,
      [["list_dir", { path: "." }]],
      "Let me look.",
    ],
  ],
  granite: [
    [
      "granite 3",
      `<|tool_call|>[{"arguments": {"path": "README.md"}, "name": "read_file"}]`,
      [["read_file", R]],
      "",
    ],
  ],
  lfm2: [
    [
      "pythonic inside markers",
      `<|tool_call_start|>[read_file(path="README.md")]<|tool_call_end|>Reading it now.`,
      [["read_file", R]],
      "Reading it now.",
    ],
    [
      "json inside markers",
      `<|tool_call_start|>[{"name": "list_dir", "arguments": {"path": "src"}}]<|tool_call_end|>`,
      [["list_dir", { path: "src" }]],
    ],
  ],
  "glm-4.5": [
    [
      "two args",
      `<tool_call>write_file\n<arg_key>path</arg_key>\n<arg_value>src/app.py</arg_value>\n<arg_key>content</arg_key>\n<arg_value>print('hi')\n</arg_value>\n</tool_call>`,
      [["write_file", W]],
      "",
    ],
    [
      "schema coercion",
      `<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>README.md</arg_value>\n<arg_key>limit</arg_key>\n<arg_value>5</arg_value>\n</tool_call>`,
      [["read_file", { path: "README.md", limit: 5 }]],
    ],
  ],
  gemma: [
    [
      "functiongemma markers",
      `<start_function_call>call:read_file{path:<escape>README.md<escape>}<end_function_call>`,
      [["read_file", R]],
      "",
    ],
    [
      "bare call with number",
      `call:read_file{path:<escape>README.md<escape>,limit:5}`,
      [["read_file", { path: "README.md", limit: 5 }]],
    ],
    [
      "tool_code block",
      'Let me check.\n```tool_code\nprint(read_file(path="README.md"))\n```',
      [["read_file", R]],
      "Let me check.",
    ],
  ],
  "qwen3-coder": [
    [
      "parameters",
      `<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/app.py\n</parameter>\n<parameter=content>\nprint('hi')\n\n</parameter>\n</function>\n</tool_call>`,
      [["write_file", W]],
      "",
    ],
    [
      "two calls and coercion",
      `Reading.\n<tool_call>\n<function=read_file>\n<parameter=path>\nREADME.md\n</parameter>\n<parameter=offset>\n10\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=list_dir>\n<parameter=path>\nsrc\n</parameter>\n</function>\n</tool_call>`,
      [
        ["read_file", { path: "README.md", offset: 10 }],
        ["list_dir", { path: "src" }],
      ],
      "Reading.",
    ],
  ],
  deepseek: [
    [
      "v3 / r1 fenced",
      '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{"path": "README.md"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
      [["read_file", R]],
      "",
    ],
    [
      "v3.1 plain, two calls",
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "README.md"}<｜tool▁call▁end｜><｜tool▁call▁begin｜>list_dir<｜tool▁sep｜>{"path": "src"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
    ],
    [
      "r1 thinking before",
      `<think>I should read the readme.</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n\`\`\`json\n{"path":"README.md"}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
      [["read_file", R]],
    ],
  ],
  "phi4-mini": [
    [
      "functools list",
      `functools[{"name": "read_file", "arguments": {"path": "README.md"}}, {"name": "list_dir", "arguments": {"path": "src"}}]`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
      "",
    ],
  ],
  functionary: [
    [
      "v3.1 function tags",
      `<function=read_file>{"path": "README.md"}</function>`,
      [["read_file", R]],
      "",
    ],
    [
      "v3.2 recipients",
      `>>>all\nI will read it.>>>read_file\n{"path": "README.md"}`,
      [["read_file", R]],
      "I will read it.",
    ],
  ],
  "command-r": [
    [
      "r7b action block",
      `<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "read_file", "parameters": {"path": "README.md"}}]<|END_ACTION|>`,
      [["read_file", R]],
      "",
    ],
    [
      "r+ Action: json",
      'Action: ```json\n[{"tool_name": "list_dir", "parameters": {"path": "src"}}]\n```',
      [["list_dir", { path: "src" }]],
      "",
    ],
  ],
  "kimi-k2": [
    [
      "section with two calls",
      `<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{"path": "README.md"}<|tool_call_end|><|tool_call_begin|>functions.list_dir:1<|tool_call_argument_begin|>{"path": "src"}<|tool_call_end|><|tool_calls_section_end|>`,
      [
        ["read_file", R],
        ["list_dir", { path: "src" }],
      ],
      "",
    ],
  ],
  harmony: [
    [
      "commentary to functions",
      `<|channel|>analysis<|message|>Need to read README.<|end|><|start|>assistant<|channel|>commentary to=functions.read_file <|constrain|>json<|message|>{"path":"README.md"}<|call|>`,
      [["read_file", R]],
    ],
    [
      "recipient before channel",
      `<|start|>assistant to=functions.list_dir<|channel|>commentary json<|message|>{"path": "src"}<|call|>`,
      [["list_dir", { path: "src" }]],
      "",
    ],
  ],
};

const SCHEMAS = {
  read_file: {
    properties: {
      path: { type: "string" },
      offset: { type: "integer" },
      limit: { type: "integer" },
    },
  },
};

describe.each(Object.entries(CASES))("%s", (format, cases) => {
  it.each(cases)("%s", (_label, text, calls, content) => {
    const auto = parseToolCalls(text, { schemas: SCHEMAS });
    expect(auto.calls.map((c) => [c.name, c.arguments])).toEqual(calls);
    expect(auto.format).toBe(format);
    if (content !== undefined) expect(auto.content).toBe(content);
    const explicit = parseToolCalls(text, { format: format as never, schemas: SCHEMAS });
    expect(explicit.calls.map((c) => [c.name, c.arguments])).toEqual(calls);
  });
});

describe("negatives: no call", () => {
  it.each([
    ["plain prose", "I have finished: src/app.py now prints hi."],
    [
      "code that mentions a call",
      "Use `read_file(path)` to read a file, e.g. in Python: open(path).read()",
    ],
    ["a JSON object that is not a call", `The config is {"port": 8080, "debug": true}.`],
    [
      "a call only inside thinking",
      `<think><tool_call>{"name": "read_file", "arguments": {"path": "x"}}</tool_call></think>Done, nothing to read.`,
    ],
    ["empty", ""],
    ["a markdown list with brackets", "- [x] done\n- [ ] todo(later)"],
    ["a sentence naming the Hermes tag", "The parser looks for the <tool_call> tag and reads it."],
    [
      "a sentence naming the Qwen3-Coder tags",
      "Qwen3-Coder writes `<function=name>` followed by `<parameter=key>` tags.",
    ],
  ])("%s", (_label, text) => {
    const r = parseToolCalls(text);
    expect(r.calls).toEqual([]);
    expect(r.problem).toBeUndefined();
  });

  it("a call to a tool that is not offered is not a call", () => {
    const text = `<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>`;
    expect(parseToolCalls(text, { toolNames: ["read_file"] })).toEqual({
      calls: [],
      content: text,
    });
  });

  it("a name in OpenAI's functions. namespace is the offered tool's", () => {
    const text = `<tool_call>{"name": "functions.read_file", "arguments": ${JSON.stringify(R)}}</tool_call>`;
    expect(parseToolCalls(text, { toolNames: ["read_file"] }).calls).toEqual([
      { name: "read_file", arguments: R },
    ]);
    expect(parseToolCalls(text, { toolNames: ["write_file"] }).calls).toEqual([]);
  });

  it("wrappers a call was read from inside are not left in the content", () => {
    const call = `{"name": "read_file", "arguments": ${JSON.stringify(R)}}`;
    for (const text of [
      `<tool_call>\n<json>${call}</json>\n</tool_call>`,
      `Reading it.\n\`\`\`xml\n<function_call>${call}</function_call>\n\`\`\``,
    ]) {
      const r = parseToolCalls(text, { toolNames: ["read_file"] });
      expect(r.calls, text).toEqual([{ name: "read_file", arguments: R }]);
      expect(r.content, text).toBe(text.startsWith("Reading") ? "Reading it." : "");
    }
  });

  it("salvages a JSON call mid-text only when the offered tools are known", () => {
    const text = `Sure, calling it: {"name": "read_file", "arguments": {"path": "README.md"}} now.`;
    expect(parseToolCalls(text).calls).toEqual([]);
    expect(parseToolCalls(text, { toolNames: ["read_file"] })).toMatchObject({
      calls: [{ name: "read_file", arguments: R }],
      content: "Sure, calling it:  now.",
    });
  });
});

describe("malformed markup stays content and is described", () => {
  it.each([
    [
      "hermes with broken JSON",
      `<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>`,
      "hermes",
      /must hold JSON/,
    ],
    [
      "mistral without JSON",
      `[TOOL_CALLS]read_file[ARGS]path=README.md`,
      "mistral",
      /not a JSON object/,
    ],
    [
      "an unclosed Hermes tag opening a line, no JSON after it",
      "<tool_call>\nread_file path=README.md",
      "hermes",
      /must hold JSON/,
    ],
    [
      "glm key without value",
      `<tool_call>read_file<arg_key>path</arg_key></tool_call>`,
      "glm-4.5",
      /arg_value/,
    ],
  ])("%s", (_label, text, format, problem) => {
    const r = parseToolCalls(text);
    expect(r.calls).toEqual([]);
    expect(r.content).toBe(text);
    expect(r.format).toBe(format);
    expect(r.problem).toMatch(problem);
  });
});

describe("arguments encoded twice", () => {
  it("a JSON string holding the object (twice or three times) is the object", () => {
    const args = { path: "a.txt", content: 'say "hi"\n' };
    expect(argumentsFromText("write_file", JSON.stringify(JSON.stringify(args)))).toEqual(args);
    expect(
      argumentsFromText("write_file", JSON.stringify(JSON.stringify(JSON.stringify(args)))),
    ).toEqual(args);
    expect(argumentsFromText("write_file", JSON.stringify(args))).toEqual(args);
  });
});
