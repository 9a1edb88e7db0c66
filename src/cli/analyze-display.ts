/**
 * What `keel analyze` shows: its progress while it runs (a bar, lines now and then, or JSON lines)
 * and its outcome at the end.
 */
import cliProgress from "cli-progress";
import pc from "picocolors";
import type { AnalysisProgress } from "../analyst/runtime.js";
import type { ProfileUse } from "../run/profile-use.js";
import { printableName } from "../printable.js";

export interface AnalyzeOutcome {
  status: "done" | "interrupted" | "error";
  thread_id: string;
  target: string;
  model: string | null;
  no_model_reason?: string;
  units: number;
  analyzed: number;
  reused: number;
  failed: number;
  folders: number;
  folders_analyzed: number;
  folders_reused: number;
  largest_request_tokens: number;
  report?: string;
  report_json?: string;
  error?: string;
  /** The model's calibration profile: applied, stale, or why none (run/profile-use.ts). */
  profile?: ProfileUse;
  exitCode: 0 | 3 | 130;
}

/** Progress for people (a bar on a terminal, a line now and then otherwise) or JSON lines for machines. */
export function createProgress(json: boolean | undefined) {
  const tty = Boolean(process.stderr.isTTY) && !json;
  const bar = tty
    ? new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: `{phase} ${pc.cyan("{bar}")} {value}/{total} | {reused} reused | {duration_formatted} | eta {eta_formatted} | {current}`,
          hideCursor: true,
          etaBuffer: 20,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let phase = "";
  let reused = 0;
  let last = 0;
  return {
    event(e: AnalysisProgress) {
      if (e.reused) reused++;
      if (json) return void process.stderr.write(`${JSON.stringify(e)}\n`);
      if (e.phase !== phase) {
        bar?.stop();
        phase = e.phase;
        reused = e.reused ? 1 : 0;
        bar?.start(e.total, 0, { phase: e.phase.padEnd(7), current: "", reused });
      }
      // a unit's name is the analysed folder's: shown with its control characters as codes
      const current = printableName(e.queue ?? e.current);
      if (bar) return bar.update(e.done, { current: current.slice(-50), reused });
      if (e.done === e.total || Date.now() - last > 3000) {
        last = Date.now();
        process.stderr.write(`${e.phase} ${e.done}/${e.total} (${reused} reused) ${current}\n`);
      }
    },
    stop: () => bar?.stop(),
  };
}

/** The human summary of an analysis. */
export function formatAnalyzeOutcome(o: AnalyzeOutcome): string {
  const head =
    o.status === "done"
      ? pc.green(pc.bold("DONE"))
      : o.status === "interrupted"
        ? pc.yellow(pc.bold("STOPPED"))
        : pc.red(pc.bold("ERROR"));
  const lines = [
    "",
    `${head}  ${pc.dim(`thread ${o.thread_id}`)}`,
    o.model
      ? `model ${o.model}: ${o.analyzed} units analysed, ${o.reused} reused from earlier runs, ${o.failed} without a usable finding; ${o.folders_analyzed} folder summaries written, ${o.folders_reused} reused`
      : pc.yellow(
          `no model was used (${o.no_model_reason ?? "none requested"}): structural report of ${o.units} units`,
        ),
    o.largest_request_tokens ? pc.dim(`largest request: ~${o.largest_request_tokens} tokens`) : "",
    o.report ? `report: ${o.report}\njson:   ${o.report_json}` : "",
    o.error ? pc.red(o.error) : "",
    o.status !== "done" ? pc.dim("run the same command again to continue where it stopped") : "",
  ];
  return lines.filter(Boolean).join("\n");
}
