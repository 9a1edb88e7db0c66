/**
 * keel eval's task set: small coding tasks whose effect is checked on disk (or, for questions, in
 * the answer), each in a fresh workspace; one of them (analyse-long) needs a long file read, which
 * a model that holds less context than it claims gets wrong. Fixed, so a model's numbers compare across runs and
 * machines. Every check runs the result with node, the one runtime keel itself needs.
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { readEnv } from "../env.js";

const run = promisify(execFile);

export interface EvalTask {
  id: string;
  /** What the task exercises. */
  kind: "create" | "edit" | "analyse" | "run" | "recover";
  request: string;
  files: Record<string, string>;
  /** Whether the task was done: "" if so, else what is wrong. */
  check(workspace: string, answer: string): Promise<string>;
}

/** Runs an ES module snippet in the workspace; its exit code says whether the check passed. */
async function node(workspace: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  try {
    // the environment keel's commands get: no FORCE_COLOR of keel's own run colouring the output
    const { stdout } = await run(process.execPath, args, {
      cwd: workspace,
      timeout: 10_000,
      env: readEnv().commandEnv,
    });
    return { ok: true, out: stdout };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, out: `${e.stdout ?? ""}${e.stderr ?? e.message}` };
  }
}

const asModule = (workspace: string, code: string) =>
  node(workspace, ["--input-type=module", "-e", code]);

const ESM = { "package.json": '{ "type": "module" }\n' };

const SYLLABLES = ["ta", "ri", "mo", "len", "va", "dor", "ki", "sel", "an", "ru", "phe", "gal"];
/** A name for user `i`, the same on every machine. */
const nameOf = (i: number) => {
  // the syllables are the digits of a scrambled i, base 12: every i its own name
  let x = Math.imul(i, 2654435761) >>> 0;
  const word = (len: number) => {
    let w = "";
    for (let k = 0; k < len; k++, x = Math.floor(x / 12)) w += SYLLABLES[x % 12];
    return w[0]!.toUpperCase() + w.slice(1);
  };
  return `${word(3)} ${word(3)}`;
};
/** The long file of the long-context task: 500 users, about 27,000 characters. */
const USERS = `export const users = [\n${Array.from(
  { length: 500 },
  (_, i) =>
    `  { id: ${i + 1}, name: "${nameOf(i + 1)}", city: "${nameOf(i + 900).split(" ")[1]}" },`,
).join("\n")}\n];\n`;
/** The user the long-context task asks about: far enough in that a small window clips it away. */
export const LONG_TASK_USER = { id: 250, name: nameOf(250) };

export const EVAL_TASKS: readonly EvalTask[] = [
  {
    id: "create-greet",
    kind: "create",
    request:
      'Create greet.js exporting a function greet(name) that returns "Hello, <name>!" (for example greet("Ada") is "Hello, Ada!"). The project uses ES modules.',
    files: ESM,
    async check(ws) {
      const r = await asModule(
        ws,
        `import { greet } from "./greet.js"; if (greet("Ada") !== "Hello, Ada!") { console.log(greet("Ada")); process.exit(1); }`,
      );
      return r.ok
        ? ""
        : `greet("Ada") is wrong or greet.js is missing: ${r.out.trim().slice(0, 200)}`;
    },
  },
  {
    id: "edit-subtract",
    kind: "edit",
    request: "In math.js, subtract adds instead of subtracting. Fix it without changing add.",
    files: {
      ...ESM,
      "math.js":
        "export function add(a, b) {\n  return a + b;\n}\n\nexport function subtract(a, b) {\n  return a + b;\n}\n",
    },
    async check(ws) {
      const r = await asModule(
        ws,
        `import { add, subtract } from "./math.js"; if (subtract(5, 3) !== 2 || add(2, 2) !== 4) process.exit(1);`,
      );
      return r.ok ? "" : `subtract(5, 3) is not 2 or add broke: ${r.out.trim().slice(0, 200)}`;
    },
  },
  {
    id: "analyse-find",
    kind: "analyse",
    request: "Which file defines the function parseConfig? Answer with its path.",
    files: {
      ...ESM,
      "src/app.js": 'import { parseConfig } from "./config/parse.js";\nparseConfig("{}");\n',
      "src/config/parse.js": "export function parseConfig(text) {\n  return JSON.parse(text);\n}\n",
      "src/util/log.js": "export const log = (m) => console.log(m);\n",
    },
    check(_ws, answer) {
      return Promise.resolve(
        answer.includes("src/config/parse.js")
          ? ""
          : `the answer does not name src/config/parse.js: ${answer.slice(0, 200)}`,
      );
    },
  },
  {
    id: "analyse-long",
    kind: "analyse",
    request: `data/users.js lists the users. What is the name of the user with id ${LONG_TASK_USER.id}? Answer with the name.`,
    files: { ...ESM, "data/users.js": USERS },
    check(_ws, answer) {
      return Promise.resolve(
        answer.includes(LONG_TASK_USER.name)
          ? ""
          : `the answer does not name ${LONG_TASK_USER.name}: ${answer.slice(0, 200)}`,
      );
    },
  },
  {
    id: "run-tests",
    kind: "run",
    request: "Run `node test.js` and tell me how many tests passed.",
    files: {
      ...ESM,
      "test.js":
        'import { writeFileSync } from "node:fs";\nconst results = [1 + 1 === 2, "a".length === 1, [].length === 0];\nwriteFileSync("ran.txt", "yes");\nconsole.log(`${results.filter(Boolean).length} passed`);\n',
    },
    async check(ws, answer) {
      const ran = await node(ws, [
        "-e",
        "process.exit(require('fs').existsSync('ran.txt') ? 0 : 1)",
      ]);
      if (!ran.ok) return "node test.js was not run";
      return /\b3\b|\bthree\b/i.test(answer)
        ? ""
        : `the answer does not say 3: ${answer.slice(0, 200)}`;
    },
  },
  {
    id: "recover-syntax",
    kind: "recover",
    request: "Make `node main.js` print 42.",
    files: {
      ...ESM,
      "main.js": 'import { answer } from "./lib/answer.js";\nconsole.log(answer);\n',
      "lib/answer.js": "export const answer = 4 2;\n",
    },
    async check(ws) {
      const r = await node(ws, ["main.js"]);
      return r.ok && r.out.trim() === "42"
        ? ""
        : `node main.js printed: ${r.out.trim().slice(0, 200)}`;
    },
  },
];

/** Writes a task's files into an empty workspace. */
export async function setUp(task: EvalTask, workspace: string): Promise<void> {
  for (const [rel, content] of Object.entries(task.files)) {
    const abs = path.join(workspace, rel);
    await mkdir(path.dirname(abs), { recursive: true });
    await writeFile(abs, content);
  }
}
