/**
 * What undo costs a changing step: the shadow repository's snapshots around a file tool's step
 * (its one path) and around a command's step (the whole workspace, as git sees it), next to the
 * same step without them. Milliseconds per step, median of the runs.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { recordStep } from "../src/undo/record.js";
import { benchTemp } from "./temp.js";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (n: number) => Math.round(n * 10) / 10;

export async function benchUndo(
  sizes: readonly number[],
  steps = 15,
): Promise<Record<string, { bareMs: number; fileStepMs: number; commandStepMs: number }>> {
  const out: Record<string, { bareMs: number; fileStepMs: number; commandStepMs: number }> = {};
  for (const files of sizes) {
    const ws = benchTemp("keel-bench-undo-");
    mkdirSync(path.join(ws, "src"));
    for (let i = 0; i < files; i++)
      writeFileSync(path.join(ws, `src/f${i}.js`), `export const x${i} = ${i};\n`.repeat(30));
    let n = 0;
    const step = () => Promise.resolve(writeFileSync(path.join(ws, "src/f1.js"), `v${n++}\n`));
    const time = async (paths: string[] | undefined | "bare") => {
      const ms: number[] = [];
      for (let i = 0; i < steps; i++) {
        const t0 = performance.now();
        if (paths === "bare") await step();
        else
          await recordStep(
            { workspace: ws, thread: "bench", callId: `c${n}`, messages: n, label: "step", paths },
            step,
            (why) => {
              throw new Error(why);
            },
          );
        ms.push(performance.now() - t0);
      }
      return round(median(ms));
    };
    await time(undefined); // the shadow repository and its index exist before timing
    out[`${files} files`] = {
      bareMs: await time("bare"),
      fileStepMs: await time(["src/f1.js"]),
      commandStepMs: await time(undefined),
    };
    rmSync(ws, { recursive: true, force: true });
  }
  return out;
}
