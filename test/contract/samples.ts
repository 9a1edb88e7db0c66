/**
 * Texts in four scripts whose token density the contract suite checks on every server: what the
 * real Qwen2 tokenizer makes of them (characters per token, measured with llama-server's /tokenize,
 * docs/real-servers.md) is what the fakes must approximate.
 */

export const SAMPLES = {
  english:
    "The agent reads the repository before it changes anything. When a test fails, it runs the " +
    "failing test again with more output, looks at the stack trace and opens the file the trace " +
    "points to. It keeps a short plan of what it has tried and what it will try next, so that a " +
    "long task does not go round in circles. Every change is small enough to review, and every " +
    "command it runs is shown to the person who asked for the work, together with its exit code " +
    "and the last lines it printed. If the model server is slow, the agent waits; if the server " +
    "refuses a request, the agent says why and what the person can do about it.",
  typescript: [
    "export async function readConfig(file: string): Promise<Settings> {",
    '  const text = await readFile(file, "utf8");',
    "  const parsed = JSON.parse(text) as Partial<Settings>;",
    '  if (typeof parsed.contextWindow !== "number" || parsed.contextWindow <= 0) {',
    "    throw new Error(`${file}: contextWindow must be a positive number`);",
    "  }",
    "  return { ...DEFAULT_SETTINGS, ...parsed, tools: parsed.tools ?? [] };",
    "}",
    "",
    "for (const [name, tool] of Object.entries(registry)) {",
    "  if (!tool.enabled) continue;",
    '  schemas.push({ type: "function", function: { name, parameters: tool.schema } });',
    "}",
  ].join("\n"),
  json: JSON.stringify({
    name: "edit_file",
    arguments: {
      path: "src/models/openai/chat-model.ts",
      old_text: "const usage = chunk.usage;",
      new_text: "const usage = chunk.usage ?? undefined;",
      line: 128,
      replace_all: false,
    },
    id: "call_7f3a9c2e41",
    meta: { attempt: 2, tokens: [151657, 198, 4913], ok: true },
  }),
  chinese:
    "代理在修改任何内容之前会先阅读整个代码仓库。当测试失败时，它会带着更多的输出重新运行失败的测试，" +
    "查看堆栈跟踪，并打开跟踪所指向的文件。它会保留一个简短的计划，记录已经尝试过的方法和下一步要尝试的方法，" +
    "这样长时间的任务就不会原地打转。每一次修改都足够小，便于审查；它运行的每一条命令都会连同退出码和最后几行输出一起展示给提出请求的人。",
} as const;

/**
 * Characters per token of each sample with the real Qwen2 tokenizer (llama-server's /tokenize here:
 * 135, 138, 94 and 102 tokens); a server must land within 12% of them.
 */
export const DENSITY = { english: 4.58, typescript: 4.13, json: 2.98, chinese: 1.63 } as const;
