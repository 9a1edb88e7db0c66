/**
 * The files one tool call crosses, measured: one native `write_file` call from the fake Ollama
 * through the coder graph (`runAgent`, default settings), with V8's precise coverage counting the
 * functions of `src/` that ran from the model request that got the call to the next one (the fake
 * server itself, `src/testing/`, aside). The list goes into docs/ARCHITECTURE.md between its
 * `call-map` markers; `--check` exits 1 when the doc says something else (a unit test runs it).
 *
 *   npm run docs:call-map            rewrite the doc's list
 *   npm run docs:call-map -- --check  compare only
 *   npm run docs:call-map -- --functions  also print each file's functions that ran, with counts
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runAgent } from "../src/api.js";
import { closeSandbox, probeSandbox } from "../src/sandbox/runtime.js";
import { startFakeOllama } from "../src/testing/fake-ollama/index.js";
import { call, calls, keelScript } from "../src/testing/script.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const SRC = pathToFileURL(path.join(ROOT, "src")).href + "/";
const DOC = path.join(ROOT, "docs/ARCHITECTURE.md");
const START = "<!-- call-map:start (npm run docs:call-map writes this list) -->";
const END = "<!-- call-map:end -->";

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

/** The `src/` files (relative to it) any of whose functions ran since the last take. */
function take(session: Session): string[] {
  let ran: string[] = [];
  // a session on this thread answers synchronously
  session.post("Profiler.takePreciseCoverage", (err, res) => {
    if (err) throw err;
    const scripts = (res as Coverage).result;
    ran = scripts
      .filter((s) => s.url.startsWith(SRC) && s.functions.some((f) => f.ranges[0]!.count > 0))
      .map((s) => s.url.slice(SRC.length).replace(/\?.*$/, ""))
      .filter((f) => !f.startsWith("testing/"));
    functions = new Map(
      scripts.map((s) => [
        s.url.slice(SRC.length).replace(/\?.*$/, ""),
        s.functions
          .filter((f) => f.ranges[0]!.count > 0)
          .map((f) => `${f.functionName || "(anonymous)"} ×${f.ranges[0]!.count}`),
      ]),
    );
  });
  return ran;
}

/** Each file's functions that ran in the last take, with their call counts (`--functions`). */
let functions = new Map<string, string[]>();

/** Runs the traced turn; the files that ran between the two model requests. */
async function trace(): Promise<string[]> {
  // the sandbox's probe (once per process) starts its proxies, and a timer stops them a second
  // after: done before the run, so the timer's stop does not land in the traced call at random
  await probeSandbox();
  await closeSandbox();
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  const workspace = realpathSync(mkdtempSync(path.join(tmpdir(), "keel-map-")));
  let ran: string[] | undefined;
  const fake = await startFakeOllama({
    script: keelScript((req) => {
      if (req.turn === 0) {
        take(session); // counts start at the request that gets the call
        return calls(call("write_file", { path: "hello.txt", content: "hello\n" }));
      }
      ran ??= take(session);
      return { content: "Wrote hello.txt." };
    }),
  });
  try {
    await runAgent("Write hello.txt saying hello", { ollamaUrl: fake.url, workspace });
    if (readFileSync(path.join(workspace, "hello.txt"), "utf8") !== "hello\n")
      throw new Error("the traced call did not write hello.txt");
  } finally {
    await fake.close();
    session.disconnect();
    rmSync(workspace, { recursive: true, force: true });
  }
  if (!ran) throw new Error("the fake never got the request after the call: nothing traced");
  return ran.sort();
}

/** The doc's list: a count, then the files by folder. */
function render(files: string[]): string {
  const byFolder = new Map<string, string[]>();
  for (const f of files) {
    const folder = `src/${path.dirname(f)}/`.replace("/./", "/");
    byFolder.set(folder, [...(byFolder.get(folder) ?? []), path.basename(f)]);
  }
  const lines = [...byFolder]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([folder, names]) => `- \`${folder}\`: ${names.join(", ")}`);
  return [
    START,
    "",
    `**${files.length} files in ${byFolder.size} folders** (measured by \`scripts/call-map.ts\`):`,
    "",
    ...lines,
    "",
    END,
  ].join("\n");
}

const files = await trace();
if (process.argv.includes("--functions"))
  for (const f of files) console.log(`${f}: ${functions.get(f)!.join(", ")}`);
const doc = readFileSync(DOC, "utf8");
const [from, to] = [doc.indexOf(START), doc.indexOf(END)];
if (from < 0 || to < from) throw new Error(`${DOC} has no call-map markers`);
const next = doc.slice(0, from) + render(files) + doc.slice(to + END.length);
if (process.argv.includes("--check")) {
  if (next !== doc) {
    console.error(
      `docs/ARCHITECTURE.md's call map is stale: one tool call now crosses ${files.length} files. Run npm run docs:call-map.`,
    );
    process.exit(1);
  }
  console.log(`docs/ARCHITECTURE.md's call map is current (${files.length} files).`);
} else {
  writeFileSync(DOC, next);
  console.log(`one tool call crosses ${files.length} files; docs/ARCHITECTURE.md updated`);
}
