import { isGraphInterrupt } from "@langchain/langgraph";
import type { z } from "zod";
import type { Isolation } from "../sandbox/policy.js";

/** What a tool does to the world; the loop guard and the approval policy read it. */
export type ToolClass = "explore" | "mutate" | "command";

/**
 * Why a tool call failed. `recover` and the timeline read these; the model reads the message.
 * (gemini-cli keeps a `ToolErrorType` for the same reason: a failure kind is data, not prose.)
 */
export const TOOL_FAILURE_KINDS = [
  "unknown_tool",
  "invalid_arguments",
  "outside_workspace",
  "not_found",
  "wrong_tool",
  "refused",
  "needs_approval",
  "timeout",
  "interrupted",
  "loop",
  "failed",
] as const;
export type ToolFailureKind = (typeof TOOL_FAILURE_KINDS)[number];

export type ToolResult =
  | {
      ok: true;
      /** Text sent back to the model. */
      output: string;
      /** Workspace-relative files this call created or changed. */
      filesWritten?: string[];
      /** Files whose content the model now knows (read or written), by content hash. */
      seen?: Record<string, string>;
      /** The check after the change (settings `checkCommand`) failed; the change stands. */
      checkFailed?: true;
    }
  | { ok: false; kind: ToolFailureKind; message: string };

/**
 * What a tool declares about a call before it runs, for the gate (coder/nodes/tool-gate.ts), which
 * alone decides and asks a person: nothing (the approval policy decides), a refusal (`refuse`: why),
 * or a question for a person (`ask`). A tool never asks; it acts on what the gate decided
 * (`ToolContext.approved`).
 */
export interface Declared {
  refuse?: string;
  ask?: {
    /** Why a person must allow it: "curl acts beyond the workspace". */
    reason: string;
    /** The call would run without the OS sandbox, which only a person (not `--yes`) can allow. */
    unsandboxed?: boolean;
    /** What the person is shown as the call, where it is not its command or path (an MCP call's arguments). */
    shown?: string;
    /** What the model is told when no one allowed it: how the user could, and what to do instead. */
    refused: string;
  };
}

/** Everything a tool needs from the run; no tool reads globals. */
export interface ToolContext {
  /** Absolute, real path of the workspace root. */
  workspace: string;
  signal?: AbortSignal;
  /** How commands are isolated (src/sandbox); absent means the OS sandbox with no grants. */
  isolation?: Isolation;
  /** Default timeout of a command, in ms. */
  commandTimeoutMs: number;
  /**
   * Time limit of a call of any other tool, in ms (`DEFAULT_TOOL_TIMEOUT_MS` when absent): past it
   * the call's signal aborts and the call is answered `timeout` (see `withDeadline`).
   */
  toolTimeoutMs?: number;
  /** Bytes of output kept from a command or file read before truncation. */
  outputLimit: number;
  /** Told the process-group id of a spawned command, so a crash can find it again. */
  onSpawn?: (pid: number) => void;
  /**
   * Content hashes of the files as this thread last read or wrote them. edit_file refuses a file
   * missing here or changed since. Absent: a tool run outside a thread, with no such check.
   */
  seen?: Readonly<Record<string, string>>;
  /** Earlier failed calls of this tool on the same path this run (edit_file then steers to write_file). */
  failuresOnTarget?: number;
  /**
   * The gate allowed what the call's `declare` asked for (a person, `--yes` or an allow rule): a
   * command may reach what such a command reaches (the package registries). Absent: not allowed,
   * and a tool whose `declare` asks refuses rather than act.
   */
  approved?: boolean;
  /**
   * A person approved this command's write to git at the gate (tools/permissions.ts `decideCall`):
   * it runs with the repositories' `.git` writable, but for their hooks and configs.
   */
  gitWritable?: boolean;
}

/** A single-purpose tool: a described zod schema and a function that never throws. */
export interface KeelTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  toolClass: ToolClass;
  schema: S;
  /** The JSON Schema the model is shown, where it is not the schema's own (MCP tools). */
  parameters?: Record<string, unknown>;
  /**
   * The workspace-relative paths a call may change, for undo snapshots and path rules. Absent on a
   * changing tool: it may change anything (commands, MCP tools).
   */
  touches?(args: z.infer<S>, workspace: string): string[];
  /**
   * The call's own time limit where the tool keeps one (a command's timeout, an MCP server's): its
   * deadline is that plus `OWN_LIMIT_GRACE_MS`, so the tool ends itself first and says how.
   */
  ownLimitMs?(args: z.infer<S>, ctx: ToolContext): number;
  /** What the call needs beyond the approval policy, said before it runs (`Declared`). */
  declare?(args: z.infer<S>, ctx: ToolContext): Declared | Promise<Declared>;
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

export const ok = (output: string, filesWritten?: string[]): ToolResult =>
  filesWritten ? { ok: true, output, filesWritten } : { ok: true, output };

export const fail = (kind: ToolFailureKind, message: string): ToolResult => ({
  ok: false,
  kind,
  message,
});

/**
 * Defines a tool with its schema type carried through to `run`. Whatever the tool's code throws
 * becomes a failure the model can act on: tools never throw into the graph. Only a LangGraph
 * interrupt (a pause to ask a person) passes through. Every call runs under its deadline
 * (`withDeadline`): its signal aborts with the run's or when its time is up.
 */
export function defineTool<S extends z.ZodType>(tool: KeelTool<S>): KeelTool<S> {
  return {
    ...tool,
    async run(args, ctx) {
      const own = tool.ownLimitMs?.(args, ctx);
      const limit =
        own === undefined
          ? (ctx.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS)
          : own + OWN_LIMIT_GRACE_MS;
      try {
        return await withDeadline(tool.name, limit, ctx.signal, (signal) =>
          tool.run(args, { ...ctx, signal }),
        );
      } catch (err) {
        if (isGraphInterrupt(err)) throw err;
        return fail(
          "failed",
          `${tool.name} failed: ${(err as Error).message}. Check the arguments (does the path exist? is it a file or a folder?) and try again differently.`,
        );
      }
    },
  };
}

/** A call's time limit when the run sets none (`toolTimeoutMs`). */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** What a tool with its own time limit (a command's, an MCP server's) gets past it to end itself. */
export const OWN_LIMIT_GRACE_MS = 10_000;

/**
 * Runs `work` with a signal that aborts when `signal` does or when `limitMs` passes; past the
 * limit the answer is a `timeout` failure naming the tool, whether or not `work` has ended (a
 * tool that never looks at its signal cannot hold the run). No tool blocks the event loop
 * (CPU-heavy work runs on a worker thread: off-thread.ts), so the deadline always fires.
 */
export async function withDeadline(
  tool: string,
  limitMs: number,
  signal: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<ToolResult>,
): Promise<ToolResult> {
  const deadline = new AbortController();
  const combined = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<ToolResult>((resolve) => {
    timer = setTimeout(() => {
      const answer = timedOut(tool, limitMs);
      deadline.abort(new Error(answer.ok ? "" : answer.message));
      resolve(answer);
    }, limitMs);
  });
  try {
    return await Promise.race([work(combined), expired]);
  } catch (err) {
    // work that threw because its deadline stopped it timed out; it did not fail
    if (deadline.signal.aborted && !signal?.aborted) return timedOut(tool, limitMs);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The failure the model reads for a call stopped at its deadline. */
export function timedOut(tool: string, limitMs: number): ToolResult {
  const s = limitMs >= 1000 ? `${Math.round(limitMs / 100) / 10} s` : `${limitMs} ms`;
  return fail(
    "timeout",
    `${tool} was stopped: it ran past its time limit (${s}), so it has no result. Narrow it (a smaller folder, a simpler pattern, fewer files) and call it again.`,
  );
}
