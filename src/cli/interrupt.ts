/**
 * Ctrl-C for long runs: the first press drains (the step in flight finishes, its checkpoint is
 * written, the run stops); a second press aborts at once. SIGTERM (a service manager, `timeout`,
 * `kill`) aborts at once, as it has no time to wait for a step; a second SIGTERM exits without the
 * report. A reader of keel's output that went away (`keel run … | head`) stops the run the same way,
 * quietly. Either way the thread resumes later.
 */
import { RunControl } from "@langchain/langgraph";
import pc from "picocolors";

export interface StopHandle {
  control: RunControl;
  signal: AbortSignal;
  /** The exit code of a run's outcome: an interrupted run (130) stopped by SIGTERM exits 143. */
  exitCode: (code: number) => number;
  /** Stops the run now, as a second Ctrl-C does (Ctrl-C typed at a question). */
  now: () => void;
  /** Removes the handlers. */
  dispose: () => void;
}

/** 128 + the signal's number, as a shell reports a process SIGTERM or SIGPIPE ended. */
const SIGTERM_EXIT = 143;
export const CLOSED_PIPE_EXIT = 141;

/** The runs in progress, each stopped at once by `stopRunsNow`. */
const running = new Set<(exit: number) => void>();

/**
 * Stops every run in progress at once, to exit with `exit` (their commands in flight are stopped
 * too); false when none is running.
 */
export function stopRunsNow(exit: number): boolean {
  for (const stop of running) stop(exit);
  return running.size > 0;
}

/**
 * Handles Ctrl-C and SIGTERM for one run. `kept`: the run's checkpoints outlive the process (not
 * `--checkpoints memory`), so what is said about resuming is true.
 */
export function installCtrlC(say: (line: string) => void, kept = true): StopHandle {
  const control = new RunControl();
  const abort = new AbortController();
  let stoppedWith: number | undefined;
  const resumes = kept
    ? "the thread is checkpointed and resumes with the same command"
    : "--checkpoints memory keeps nothing to resume";
  const onSigint = () => {
    if (!control.drainRequested) {
      say(
        pc.yellow(`stopping after the step in flight (press Ctrl-C again to stop now); ${resumes}`),
      );
      control.requestDrain("ctrl-c");
    } else {
      say(pc.yellow("stopping now (the step in flight is cut short)"));
      abort.abort();
    }
  };
  const stopNow = (exit: number) => {
    stoppedWith ??= exit;
    abort.abort();
  };
  const onSigterm = () => {
    if (stoppedWith !== undefined) process.exit(SIGTERM_EXIT);
    say(
      pc.yellow(
        `SIGTERM: stopping now${kept ? " (the step in flight reruns on resume)" : ""}; ${resumes}`,
      ),
    );
    stopNow(SIGTERM_EXIT);
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  running.add(stopNow);
  return {
    control,
    signal: abort.signal,
    exitCode: (code) => (stoppedWith !== undefined && code === 130 ? stoppedWith : code),
    now: () => {
      say(pc.yellow(`stopping now; ${resumes}`));
      abort.abort();
    },
    dispose: () => {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
      running.delete(stopNow);
    },
  };
}
