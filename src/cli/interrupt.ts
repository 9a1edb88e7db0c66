/**
 * Ctrl-C for long runs: the first press drains (the step in flight finishes, its checkpoint is
 * written, the run stops); a second press aborts at once. SIGTERM (a service manager, `timeout`,
 * `kill`) aborts at once, as it has no time to wait for a step; a second SIGTERM exits without the
 * report. Either way the thread resumes later.
 */
import { RunControl } from "@langchain/langgraph";
import pc from "picocolors";

export interface StopHandle {
  control: RunControl;
  signal: AbortSignal;
  /** The exit code of a run's outcome: an interrupted run (130) stopped by SIGTERM exits 143. */
  exitCode: (code: number) => number;
  /** Removes the handlers. */
  dispose: () => void;
}

/** 128 + SIGTERM's number, as a shell reports a process SIGTERM ended. */
const SIGTERM_EXIT = 143;

export function installCtrlC(say: (line: string) => void): StopHandle {
  const control = new RunControl();
  const abort = new AbortController();
  let terminated = false;
  const onSigint = () => {
    if (!control.drainRequested) {
      say(
        pc.yellow(
          "stopping after the step in flight (press Ctrl-C again to stop now); the thread is checkpointed and resumes with the same command",
        ),
      );
      control.requestDrain("ctrl-c");
    } else {
      abort.abort();
    }
  };
  const onSigterm = () => {
    if (terminated) process.exit(SIGTERM_EXIT);
    terminated = true;
    say(
      pc.yellow(
        "SIGTERM: stopping now (the step in flight reruns on resume); the thread is checkpointed and resumes with the same command",
      ),
    );
    abort.abort();
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  return {
    control,
    signal: abort.signal,
    exitCode: (code) => (terminated && code === 130 ? SIGTERM_EXIT : code),
    dispose: () => {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
    },
  };
}
