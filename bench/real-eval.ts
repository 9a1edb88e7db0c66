/**
 * `npm run bench:real-eval`: keel eval's task set (src/eval/tasks.ts) with a real small model on
 * each real server, run by keel and by the bare agents (`keel eval --agent`), k times each: pass^k
 * and what the runs show (well-formed calls, repairs, salvage, prompt tokens, time). The built CLI
 * is run as a user would, through a recorder that caps every reply at the server (llama-server's
 * own `-n`; Ollama's `num_predict`, added where the request has none) so a rambling model cannot
 * fill the context on every turn. Writes bench/real-eval.json.
 *
 * Options: `--model NAME` (the installer's model name, default smollm2-135m: SmolLM2-135M-Instruct;
 * also gemma3-270m), `-k N` (default 2), `--turns N` (the most model turns per attempt, default 8),
 * `--servers llama.cpp,ollama`, `--agents keel,react,create-agent`, `--tasks id,id` (default all),
 * `--out FILE` (under bench/, default real-eval.json).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { EvalReport } from "../src/eval/run.js";
import { option } from "./args.js";
import { realServers, SMOL_NAME } from "../test/real/support.js";
import { benchTemp } from "./temp.js";

const arg = (name: string, fallback: string) => option(name) ?? fallback;
const model = arg("--model", SMOL_NAME);
const k = arg("-k", "2");
const turns = Number(arg("--turns", "8"));
const servers = arg("--servers", "llama.cpp,ollama").split(",");
const agents = arg("--agents", "keel,react,create-agent").split(",");
const tasks = arg("--tasks", "")
  .split(",")
  .filter(Boolean)
  .flatMap((t) => ["--task", t]);
const CLI = path.resolve(import.meta.dirname, "../dist/cli/main.js");

/** The most tokens of one reply, for every agent: the server's own cap (`-n`, `num_predict`). */
const MAX_REPLY = 512;
/**
 * A settings home: the same budgets and window for every agent. keel sends its generation budget
 * with every request, which overrides the server's cap the bare agents get: the same cap here (an
 * 8,192-token act budget let one Gemma 3 270M attempt run for 20 minutes).
 */
const home = benchTemp("keel-real-eval-home-");
mkdirSync(path.join(home, "keel"));
writeFileSync(
  path.join(home, "keel", "settings.json"),
  JSON.stringify({
    maxTurns: turns,
    maxToolCalls: turns * 2,
    contextWindow: 8192,
    generationBudget: { plan: MAX_REPLY, act: MAX_REPLY, summary: MAX_REPLY, analyze: MAX_REPLY },
  }),
);

function evaluate(flags: string[], agent: string, cwd: string): Promise<EvalReport | string> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [CLI, "eval", ...flags, ...tasks, "-k", k, "--mode", "native", "--agent", agent, "--json"],
      { cwd, env: { ...process.env, XDG_CONFIG_HOME: home, NO_COLOR: "1" } },
    );
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      process.stderr.write(d);
    });
    child.on("close", (code) => {
      try {
        resolve(code === 0 ? (JSON.parse(out) as EvalReport) : `exit ${code}: ${err.slice(-500)}`);
      } catch {
        resolve(`exit ${code}: ${err.slice(-500)}`);
      }
    });
  });
}

const results: Record<string, unknown> = { model, k: Number(k), turns };
const rows: Array<Record<string, unknown>> = [];
for (const real of realServers().filter((r) => servers.includes(r.kind))) {
  const server = await real.start({ context: 8192, maxReply: MAX_REPLY, model });
  try {
    for (const agent of agents) {
      const started = performance.now();
      const cwd = benchTemp("keel-real-eval-");
      const r = await evaluate(
        [...server.flags, "--checkpoints", `sqlite:${path.join(cwd, "eval.db")}`],
        agent,
        cwd,
      );
      const seconds = Math.round((performance.now() - started) / 1000);
      results[`${real.kind} ${agent}`] = r;
      if (typeof r === "string") {
        rows.push({ server: real.kind, model, agent, error: r.slice(0, 120), seconds });
        continue;
      }
      const sum = (f: (a: EvalReport["attempts"][number]) => number) =>
        r.attempts.reduce((n, a) => n + f(a), 0);
      rows.push({
        server: real.kind,
        model,
        agent,
        [`pass^${k}`]: `${r.passK.native?.passed ?? 0}/${r.passK.native?.tasks ?? 0}`,
        "attempts passed": `${r.attempts.filter((a) => a.pass).length}/${r.attempts.length}`,
        calls: sum((a) => a.calls),
        "well-formed": sum((a) => a.wellFormed),
        repaired: sum((a) => a.repaired),
        "salvaged turns": sum((a) => a.salvaged),
        turns: sum((a) => a.turns),
        statuses: [...new Set(r.attempts.map((a) => a.status))].join(","),
        "prompt tokens": sum((a) => a.promptTokens),
        seconds,
      });
    }
  } finally {
    await server.close();
  }
}
console.table(rows);
results.rows = rows;
const out = path.join(import.meta.dirname, arg("--out", "real-eval.json"));
writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(`written ${out}`);
