/**
 * Scripted model profiles for keel eval's task set (src/eval/tasks.ts), so the suite itself is
 * tested against the fake server with numbers known in advance. Each profile is a model name the
 * fake serves; each solves every task the same way and differs only in how it errs:
 *   steady   well-formed native calls
 *   sloppy   the first call of a task uses a wrong field name (file_path, cmd): keel repairs it
 *   texty    writes its calls as text even on the native channel: keel salvages them
 *   flaky    like steady, but its second attempt at the edit task writes a wrong fix
 */
import type { FakeModel, Reply, Script, ScriptedCall, ChatView } from "./fake-ollama/types.js";
import { keelScript } from "./script.js";

export const EVAL_PROFILES = ["steady", "sloppy", "texty", "flaky"] as const;
export type EvalProfile = (typeof EVAL_PROFILES)[number];

/** The profiles as fake models: tool-capable, a Hermes-style template (calls as <tool_call> JSON). */
export const EVAL_MODELS: Record<string, FakeModel> = Object.fromEntries(
  EVAL_PROFILES.map((p) => [
    p,
    { capabilities: ["completion", "tools"], family: "qwen3", contextLength: 32768 },
  ]),
);

const call = (name: string, args: Record<string, unknown>): ScriptedCall => ({
  name,
  arguments: args,
});

/**
 * A task's solution: the calls of each turn, given the tool results so far (and the request); a
 * string ends it.
 */
type Solution = (
  results: string[],
  attempt: number,
  profile: string,
  request: string,
) => ScriptedCall | string;

/** The id the long-context task asks about (its request names it). */
const longTaskId = (request: string) => /user with id (\d+)/.exec(request)?.[1] ?? "?";

/** The name a tool result shows for user `id`, if it shows that user's line. */
export const userNameIn = (result: string, id: string) =>
  new RegExp(`id: ${id}, name: "([^"]+)"`).exec(result)?.[1];

const SOLUTIONS: Record<string, Solution> = {
  "Create greet.js": (r) =>
    r.length === 0
      ? call("write_file", {
          path: "greet.js",
          content: "export function greet(name) {\n  return `Hello, ${name}!`;\n}\n",
        })
      : "Created greet.js with greet(name).",
  "In math.js, subtract": (r, attempt, profile) => {
    if (r.length === 0) return call("read_file", { path: "math.js" });
    if (r.length === 1)
      return call("edit_file", {
        path: "math.js",
        old_text: "export function subtract(a, b) {\n  return a + b;\n}",
        new_text: `export function subtract(a, b) {\n  return ${profile === "flaky" && attempt === 2 ? "b - a" : "a - b"};\n}`,
      });
    return "Fixed subtract in math.js.";
  },
  "Which file defines": (r) =>
    r.length === 0
      ? call("grep", { pattern: "function parseConfig" })
      : "parseConfig is defined in src/config/parse.js.",
  "data/users.js lists the users": (r, _attempt, _profile, request) => {
    const id = longTaskId(request);
    return r.length === 0
      ? call("grep", { pattern: `id: ${id},` })
      : `The user with id ${id} is ${userNameIn(r.join("\n"), id) ?? "not in the file"}.`;
  },
  "Run `node test.js`": (r) =>
    r.length === 0 ? call("run_command", { command: "node test.js" }) : "3 tests passed.",
  "Make `node main.js` print 42": (r) => {
    if (r.length === 0) return call("run_command", { command: "node main.js" });
    if (r.length === 1) return call("read_file", { path: "lib/answer.js" });
    if (r.length === 2)
      return call("write_file", { path: "lib/answer.js", content: "export const answer = 42;\n" });
    if (r.length === 3) return call("run_command", { command: "node main.js" });
    return "node main.js now prints 42 (lib/answer.js had a syntax error).";
  },
};

/** Field names a sloppy model uses instead of keel's (keel repairs them). */
const SLOPPY_FIELD: Record<string, [string, string]> = {
  path: ["path", "file_path"],
  command: ["command", "cmd"],
};

function sloppy(c: ScriptedCall): ScriptedCall {
  const args = { ...(c.arguments as Record<string, unknown>) };
  for (const [field, alias] of Object.values(SLOPPY_FIELD))
    if (field in args) {
      args[alias] = args[field];
      delete args[field];
      break;
    }
  return { ...c, arguments: args };
}

/** The tool results a request shows: tool messages natively, <tool_response> user messages in prompt mode. */
export const resultsOf = (req: ChatView): string[] =>
  req.messages
    .filter((m) => m.role === "tool" || m.content.startsWith("<tool_response"))
    .map((m) => m.content);

/**
 * The next step of an eval task as a well-behaved model takes it — a call, or the answer that ends
 * it — given the request (the attempt number counted by the caller); undefined for a request that
 * is no eval task.
 */
export function evalStep(
  req: ChatView,
  attempt: number,
  profile: string,
): ScriptedCall | string | undefined {
  const solve = solutionOf(req)?.[1];
  return solve?.(resultsOf(req), attempt, profile, requestOf(req));
}

/** The task a request is, and its solution. */
const solutionOf = (req: ChatView): [string, Solution] | undefined => {
  const request = requestOf(req);
  return Object.entries(SOLUTIONS).find(([k]) => request.startsWith(k));
};

/** The run's request: the first user message. */
export const requestOf = (req: ChatView): string =>
  req.messages.find((m) => m.role === "user")?.content ?? "";

/** A call as a Hermes-style model writes it in text. */
export const asText = (c: ScriptedCall) =>
  `<tool_call>\n${JSON.stringify({ name: c.name, arguments: c.arguments })}\n</tool_call>`;

/** The fake's script for the eval profiles; attempts are counted per profile, task and channel. */
export function evalModelScript(): Script {
  const attempts = new Map<string, number>();
  return keelScript((req: ChatView): Reply => {
    const profile = req.body.model as EvalProfile;
    const key = solutionOf(req)?.[0];
    if (!key) return { content: "I do not know this task." };
    const native = (req.body.tools?.length ?? 0) > 0;
    const id = `${profile}\0${key}\0${native}`;
    if (req.turn === 0) attempts.set(id, (attempts.get(id) ?? 0) + 1);
    const results = resultsOf(req);
    const step = evalStep(req, attempts.get(id) ?? 1, profile)!;
    if (typeof step === "string") return { content: step };
    const c = profile === "sloppy" && results.length === 0 ? sloppy(step) : step;
    // prompt mode has no native channel: every profile writes its calls as text there
    if (!native || profile === "texty") return { content: asText(c) };
    return { content: "", toolCalls: [c] };
  });
}
