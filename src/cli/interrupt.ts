/**
 * Ctrl-C for long runs: the first press drains (the step in flight finishes, its checkpoint is
 * written, the run stops); a second press aborts at once. Either way the thread resumes later.
 */
import { RunControl } from "@langchain/langgraph";
import pc from "picocolors";

export interface StopHandle {
  control: RunControl;
  signal: AbortSignal;
  /** Removes the handler. */
  dispose: () => void;
}

export function installCtrlC(say: (line: string) => void): StopHandle {
  const control = new RunControl();
  const abort = new AbortController();
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
  process.on("SIGINT", onSigint);
  return { control, signal: abort.signal, dispose: () => process.off("SIGINT", onSigint) };
}
