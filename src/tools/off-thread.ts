/**
 * CPU-heavy tool work off the event loop: a worker thread runs it, so keel keeps answering Ctrl-C,
 * SIGTERM and its own deadlines while it runs, and a worker still running when its call is stopped
 * is terminated — synchronous work cannot be interrupted any other way.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Runs the worker module `entry` with `data` until it posts its one answer. Rejects with the
 * signal's reason when `signal` aborts first (the worker is terminated), or with the worker's error.
 */
export function runWorker<T>(entry: URL, data: unknown, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  const worker = startWorker(entry, data);
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      void worker.terminate();
      reject(signal!.reason as Error);
    };
    signal?.addEventListener("abort", stop, { once: true });
    const done = () => signal?.removeEventListener("abort", stop);
    worker.once("message", (answer: T) => {
      done();
      resolve(answer);
      void worker.terminate();
    });
    worker.once("error", (err) => {
      done();
      reject(err);
    });
    worker.once("exit", (code) => {
      done();
      reject(new Error(`the worker ended (exit ${code}) without an answer`));
    });
  });
}

/**
 * A worker for `entry`. Built keel runs its compiled `.js`; running from the TypeScript sources
 * (the test suite, `tsx`), the worker loads the `.ts` module through tsx's require hook, as the
 * process that started it does.
 */
function startWorker(entry: URL, data: unknown): Worker {
  const file = fileURLToPath(entry);
  if (!file.endsWith(".ts")) return new Worker(entry, { workerData: data });
  const tsx = createRequire(import.meta.url).resolve("tsx/cjs/api");
  const boot = `const { workerData } = require("node:worker_threads");
require(workerData.tsx).require(workerData.entry, workerData.entry);`;
  return new Worker(boot, { eval: true, workerData: { ...(data as object), tsx, entry: file } });
}

/** The URL of a module beside `from` (its `import.meta.url`), in the same form (`.ts` or `.js`). */
export function besideModule(from: string, name: string): URL {
  return new URL(`./${name}${from.endsWith(".ts") ? ".ts" : ".js"}`, from);
}
