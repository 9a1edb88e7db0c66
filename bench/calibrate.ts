/**
 * `npm run bench:calibrate`: what `keel calibrate` buys, and what it costs.
 *
 * 1. Scripted profiles (src/testing/calibration-models.ts: native tools broken, a model that holds
 *    less context than it claims, a thinking model that spends its budget unless cut), on the fake
 *    Ollama: keel eval's tasks, k times each, with keel's defaults; with every single fixed
 *    configuration of a grid (channel × window × thinking); and after `calibrate --quick`, the
 *    profile applied as a run applies it. The best single fixed configuration is the one with the
 *    most tasks passed all k times over all profiles. Aim: calibrated ≥ that one on every profile.
 * 2. The wall time of `keel calibrate --quick` through the built CLI on the real tiny model
 *    (tiny-qwen2) on the real llama-server (-c 4096) and Ollama, where `npm run real-servers`
 *    installed them. Aim: under 10 minutes on this 2-core machine.
 *
 * Options: `-k N` (default 2), `--skip-real`, `--out FILE` (under bench/, default calibrate.json).
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { calibrate } from "../src/eval/calibrate/run.js";
import { runEval } from "../src/eval/run.js";
import { chooseToolMode } from "../src/models/capabilities.js";
import type { Profile, ProfileSettings } from "../src/run/profiles.js";
import {
  CALIBRATION_MODELS,
  CALIBRATION_PROFILES,
  calibrationScript,
  type CalibrationProfile,
} from "../src/testing/calibration-models.js";
import { startFakeOllama } from "../src/testing/fake-ollama/index.js";
import { startLlamaServer, startOllama } from "../src/testing/real-servers.js";
import { REAL } from "../test/real/support.js";
import { option } from "./args.js";
import { benchTemp } from "./temp.js";

const k = Number(option("-k") ?? "2");
const skipReal = process.argv.includes("--skip-real");
const CLI = path.resolve(import.meta.dirname, "../dist/cli/main.js");

/** The grid of single fixed configurations. */
const GRID: Array<{ name: string; settings: ProfileSettings }> = [];
for (const toolMode of ["native", "prompt"] as const)
  for (const contextWindow of [16384, 4096])
    for (const [think, label] of [
      [{ think: "on" }, "thinking on"],
      [{ think: "off" }, "thinking off"],
      [{ think: "on", thinkCut: 512 }, "thinking cut 512"],
    ] as const)
      GRID.push({
        name: `${toolMode}, window ${contextWindow}, ${label}`,
        settings: { toolMode, contextWindow, ...think },
      });

const thinks = (p: CalibrationProfile) => CALIBRATION_MODELS[p].capabilities.includes("thinking");

async function passK(
  url: string,
  model: CalibrationProfile,
  settings: ProfileSettings,
  useProfile: boolean,
): Promise<number> {
  const { toolMode, concurrency: _c, ...rest } = settings;
  const dir = benchTemp("keel-bench-cal-");
  const report = await runEval({
    k,
    modes: [toolMode ?? chooseToolMode(CALIBRATION_MODELS[model], "auto")],
    checkpoints: `sqlite:${path.join(dir, "eval.db")}`,
    settings: { model, ollamaUrl: url, maxTurns: 10, ...rest },
    profile: useProfile,
  });
  return Object.values(report.passK)[0]!.passed;
}

async function scripted() {
  const fake = await startFakeOllama({ models: CALIBRATION_MODELS, script: calibrationScript() });
  const stateDir = benchTemp("keel-bench-state-");
  process.env.KEEL_STATE_DIR = stateDir;
  const rows: Array<Record<string, unknown>> = [];
  const grid: Record<string, Record<string, number>> = {};
  try {
    for (const p of CALIBRATION_PROFILES) {
      const defaults = await passK(fake.url, p, {}, false);
      // a model that does not think takes no think setting: its grid is the channel × window one
      const seen = new Map<string, number>();
      grid[p] = {};
      for (const c of GRID) {
        const key = JSON.stringify(
          thinks(p) ? c.settings : { ...c.settings, think: 0, thinkCut: 0 },
        );
        if (!seen.has(key)) seen.set(key, await passK(fake.url, p, c.settings, false));
        grid[p][c.name] = seen.get(key)!;
      }
      const started = performance.now();
      const { profile } = await calibrate({
        settings: { model: p, ollamaUrl: fake.url },
        mode: "quick",
        k: 1,
        stateDir,
      });
      const seconds = (performance.now() - started) / 1000;
      const calibrated = await passK(fake.url, p, { toolMode: profile.settings.toolMode }, true);
      rows.push({
        profile: p,
        [`defaults pass^${k}`]: defaults,
        [`calibrated pass^${k}`]: calibrated,
        "calibrate --quick s": Number(seconds.toFixed(1)),
        won: JSON.stringify(profile.settings),
      });
      console.log(
        `${p}: defaults ${defaults}/6, calibrated ${calibrated}/6 (${JSON.stringify(profile.settings)})`,
      );
    }
  } finally {
    await fake.close();
  }
  const best = GRID.map((c) => ({
    name: c.name,
    total: CALIBRATION_PROFILES.reduce((n, p) => n + grid[p]![c.name]!, 0),
  })).sort((a, b) => b.total - a.total)[0]!;
  for (const row of rows) {
    const fixed = grid[row.profile as CalibrationProfile]![best.name]!;
    row[`best fixed pass^${k}`] = fixed;
    row["calibrated ≥ best fixed"] = (row[`calibrated pass^${k}`] as number) >= fixed;
  }
  return { rows, bestFixed: best, grid };
}

/** `keel calibrate --quick` through the built CLI: its wall time and what won. */
function calibrateCli(
  flags: string[],
  stateDir: string,
): Promise<{ seconds: number; profile?: Profile; error?: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, "calibrate", "--quick", "--json", ...flags], {
      env: { ...process.env, KEEL_STATE_DIR: stateDir, NO_COLOR: "1" },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
      process.stderr.write(d);
    });
    child.on("close", (code) => {
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
      try {
        resolve(
          code === 0
            ? { seconds, profile: JSON.parse(out) as Profile }
            : { seconds, error: err.slice(-400) },
        );
      } catch {
        resolve({ seconds, error: err.slice(-400) });
      }
    });
  });
}

async function real() {
  const rows: Array<Record<string, unknown>> = [];
  const gguf = REAL.ggufs["tiny-qwen2"];
  if (REAL.llamaServer && gguf) {
    const s = await startLlamaServer({ binary: REAL.llamaServer, gguf, ctx: 4096 });
    try {
      const r = await calibrateCli(
        ["--provider", "openai", "--base-url", `${s.url}/v1`, "-m", "tiny-qwen2"],
        benchTemp("keel-bench-state-"),
      );
      rows.push({
        server: "llama.cpp -c 4096",
        model: "tiny-qwen2",
        seconds: r.seconds,
        won: r.profile ? JSON.stringify(r.profile.settings) : r.error,
      });
    } finally {
      await s.close();
    }
  }
  if (REAL.ollama && REAL.ollamaModels) {
    const s = await startOllama({ binary: REAL.ollama, models: REAL.ollamaModels });
    try {
      const r = await calibrateCli(
        ["--ollama-url", s.url, "-m", "tiny-qwen2"],
        benchTemp("keel-bench-state-"),
      );
      rows.push({
        server: "Ollama",
        model: "tiny-qwen2",
        seconds: r.seconds,
        won: r.profile ? JSON.stringify(r.profile.settings) : r.error,
      });
    } finally {
      await s.close();
    }
  }
  return rows;
}

const load = os.loadavg()[0]!.toFixed(1);
const profiles = await scripted();
console.table(profiles.rows);
console.log(
  `best single fixed configuration: ${profiles.bestFixed.name} (${profiles.bestFixed.total} tasks over the profiles)`,
);
const realRows = skipReal ? [] : await real();
if (realRows.length) console.table(realRows);
const out = path.join(import.meta.dirname, option("--out") ?? "calibrate.json");
writeFileSync(
  out,
  `${JSON.stringify({ at: new Date().toISOString(), k, loadAverageAtStart: Number(load), scripted: profiles, real: realRows }, null, 2)}\n`,
);
console.log(`written ${out}`);
