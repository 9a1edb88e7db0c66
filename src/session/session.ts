/**
 * One `keel run`: open the checkpointer, start or resume the thread, stream the timeline, answer
 * interrupts when a person is there, and produce the outcome the CLI prints.
 */
import { randomBytes } from "node:crypto";
import { HumanMessage, isBaseMessageChunk } from "@langchain/core/messages";
import { Command, isGraphDrained, type RunControl, type StateSnapshot } from "@langchain/langgraph";
import { ContextSchema, runConfig, settingsFrom, type SettingsInput } from "../coder/context.js";
import { readEnv } from "../env.js";
import { approvalsFile, approveHint, describeEntry, recordApproval } from "../mcp/approval.js";
import { mcpServersOf, projectMcpServers } from "../mcp/servers.js";
import { withMcpScope } from "../mcp/session.js";
import { realWorkspace } from "../tools/workspace-path.js";
import { createCoderGraph } from "../coder/graph.js";
import { recordRunEnd } from "../coder/learning/ledger.js";
import type { KeelEvent } from "../coder/runtime.js";
import type { GraphDeps } from "../run/model.js";
import type { CoderStateUpdate, CoderStateValue } from "../coder/state.js";
import { ModelServerError } from "../models/errors.js";
import { openPersistence } from "../persistence/open.js";
import { lockThread } from "../persistence/thread-lock.js";
import { threadGraph } from "../persistence/thread-graph.js";
import { isolationNotice } from "../sandbox/runtime.js";
import { describeProfileUse, profileOf, type ProfileUse } from "../run/profile-use.js";
import { outcome, settingsShown, type RunOutcome, type RunStatus } from "./outcome.js";
import { resumeCommand } from "./resume-command.js";
import { createReplyPrinter, describeEvent, describeUpdate, waitingAfter } from "./timeline.js";

export interface SessionOptions {
  request?: string;
  threadId?: string;
  checkpoints: string;
  settings: SettingsInput & { workspace: string };
  deps?: GraphDeps;
  /** Writes one timeline line. */
  log: (line: string) => void;
  /** Asks a person a question; absent when nobody can answer (non-interactive). */
  ask?: (question: string) => Promise<string>;
  signal?: AbortSignal;
  /** Drains the run at the next step boundary (Ctrl-C). */
  control?: RunControl;
  /**
   * The flags that find the thread again from where keel runs (its workspace and store), for the
   * commands keel suggests; none by default.
   */
  where?: readonly string[];
  /** After this long without a line, the timeline says what the run waits for (default 20 s). */
  quietMs?: number;
  /**
   * Use the model's calibration profile beneath the other settings (default true; keel calibrate
   * measures without it).
   */
  profile?: boolean;
}

/**
 * A line when the timeline has been quiet for `quietMs` (then every 30 s more): what the run is
 * waiting for, so a slow prefill on a CPU server does not look like a hang. `touch` on each event.
 */
function quietNotices(log: (line: string) => void, quietMs: number) {
  let since = Date.now();
  let due = quietMs;
  let waitingFor = waitingAfter({});
  let asking = false;
  const timer = setInterval(
    () => {
      if (asking) return; // the run waits for the person, who is reading the question
      const quiet = Date.now() - since;
      if (quiet < due) return;
      due += 30_000;
      log(
        `… still waiting for ${waitingFor}: ${Math.round(quiet / 1000)} s so far (Ctrl-C stops after this step)`,
      );
    },
    Math.min(1000, quietMs / 4),
  );
  timer.unref();
  return {
    /** An event arrived; `next` names what comes after it, when known. */
    touch(next?: string) {
      since = Date.now();
      due = quietMs;
      if (next) waitingFor = next;
    },
    /** Says nothing while a person is asked: the run waits for their answer, not the model. */
    async asking<T>(answer: Promise<T>): Promise<T> {
      asking = true;
      try {
        return await answer;
      } finally {
        asking = false;
        since = Date.now();
        due = quietMs;
      }
    },
    stop: () => clearInterval(timer),
  };
}

export const newThreadId = () =>
  `run-${new Date().toISOString().slice(0, 10)}-${randomBytes(3).toString("hex")}`;

/**
 * Runs or resumes a thread to its end (or to a question nobody can answer). The workspace's
 * `.mcp.json` servers no person approved are asked about first when a person is there; without one
 * they are not started, and the outcome names them with the command that approves them.
 */
export async function runSession(opts: SessionOptions): Promise<RunOutcome> {
  const unapproved = await askMcpApproval(opts);
  // The MCP servers the run starts are its own: closed when it ends, however it ends.
  const o = await withMcpScope(() => runThread(opts));
  return unapproved.length
    ? { ...o, mcp_unapproved: { servers: unapproved, approve: approveHint(unapproved) } }
    : o;
}

/** The project's MCP servers still unapproved after asking the person (if there is one). */
async function askMcpApproval(opts: SessionOptions): Promise<string[]> {
  const workspace = realWorkspace(opts.settings.workspace);
  const { unapproved } = mcpServersOf(
    workspace,
    settingsFrom({ context: opts.settings }).mcpServers,
  );
  if (!opts.ask || unapproved.length === 0) return unapproved;
  const project = projectMcpServers(workspace);
  const file = approvalsFile(readEnv().userSettingsFile);
  const left: string[] = [];
  for (const name of unapproved) {
    const answer = await opts.ask(
      `${describeEntry(name, project[name]!)}\n.mcp.json names this MCP server. Start it (in the OS sandbox) in this workspace from now on? [y/N]`,
    );
    if (/^y(es)?$/i.test(answer.trim())) recordApproval(file, workspace, name, project[name]!);
    else left.push(name);
  }
  return left;
}

/** The run's calibration profile (run/profile-use.ts), said on the timeline when there is one. */
async function runProfile(
  opts: SessionOptions,
  given: SettingsInput,
): Promise<{ beneath: Record<string, unknown>; use: ProfileUse }> {
  if (opts.profile === false)
    return { beneath: {}, use: { status: "off", why: "measured without a profile" } };
  const found = await profileOf(ContextSchema, given);
  if (found.use.status === "applied" || found.use.status === "stale")
    opts.log(describeProfileUse(found.use));
  return found;
}

async function runThread(given: SessionOptions): Promise<RunOutcome> {
  // A blank request is no request: it neither starts a run nor follows one up.
  const opts = { ...given, request: given.request?.trim() ? given.request : undefined };
  const threadId = opts.threadId ?? newThreadId();
  const persistence = await openPersistence(opts.checkpoints);
  let unlock: () => Promise<void>;
  try {
    unlock = await lockThread(persistence.target, threadId);
  } catch (err) {
    await persistence.close();
    throw err;
  }
  const { checkpointer, store } = persistence;
  // The store holds the side-effect journal: a command runs at most once per call, across crashes.
  const graph = createCoderGraph(opts.deps).compile({ checkpointer, store });
  const input = { ...opts.settings, interactive: Boolean(opts.ask) };
  const { beneath, use } = await runProfile(opts, input);
  const config = {
    ...runConfig(threadId, input, beneath),
    signal: opts.signal,
    ...(opts.control ? { control: opts.control } : {}),
  };
  const settings = { ...settingsShown(config.context), profile: use };
  let quietTimer: ReturnType<typeof quietNotices> | undefined;
  const report: Report = (values, status, question) => ({
    ...outcome(values, threadId, status, question),
    settings,
  });
  try {
    const before = await graph.getState(config);
    if ((await threadGraph(checkpointer, config)) === "analyst")
      throw new UsageError(
        `thread ${threadId} is an analysis (keel analyze), not a coding run: continue it with keel analyze <folder> --thread ${threadId}`,
      );
    const first = await firstInput(before, opts, threadId, report);
    if ("done" in first) return first.done;
    let input = first.input;
    const notice = await isolationNotice(config.context.runCommandsUnsandboxed);
    if (notice) opts.log(`⚠ ${notice}`);
    const reply = createReplyPrinter(opts.log);
    const quiet = (quietTimer = quietNotices(opts.log, opts.quietMs ?? 20_000));
    for (;;) {
      const stream = await graph.stream(input as never, {
        ...config,
        streamMode: ["updates", "custom", "messages"],
      });
      await showStream(stream as AsyncIterable<[string, unknown]>, opts.log, reply, quiet);
      const snap = await graph.getState(config);
      const pending = snap.tasks.flatMap((t) => t.interrupts);
      const values = snap.values as CoderStateValue;
      if (pending.length === 0) {
        await recordRunEnd(values, { ...config, store });
        const o = report(
          values,
          values.status === "done"
            ? "done"
            : values.status === "running"
              ? "gave_up"
              : values.status,
        );
        const shown = o.summary.trim() !== "" && o.summary.trim() === reply.lastShown();
        return shown ? { ...o, answerShown: true } : o;
      }
      if (!opts.ask) return report(values, "needs_human", questionOf(pending[0]?.value));
      input = new Command({
        resume: await quiet.asking(opts.ask(questionOf(pending[0]?.value))),
      });
    }
  } catch (err) {
    const values = async () =>
      (await graph.getState(config).catch(() => undefined))?.values as CoderStateValue | undefined;
    return await failedOutcome(err, opts, persistence.target.kind, threadId, values, report);
  } finally {
    quietTimer?.stop();
    await unlock();
    await persistence.close();
  }
}

/** The outcome of a run at the state it reached, with the settings it ran with. */
type Report = (
  values: CoderStateValue | undefined,
  status: RunStatus,
  question?: string,
) => RunOutcome;

/**
 * What the thread starts from: its unfinished work resumed (a pending question answered, or the
 * run stops at it with nobody to answer), or the request given.
 */
async function firstInput(
  before: StateSnapshot,
  opts: SessionOptions,
  threadId: string,
  report: Report,
): Promise<{ input: unknown } | { done: RunOutcome }> {
  // Unfinished work shows in `tasks`: after a crash at the wrong moment `next` can be empty while a
  // task is still pending (seen with a checkpointer dying mid-step).
  const unfinished = pendingNodes(before);
  if (unfinished.length > 0) {
    opts.log(
      `resuming thread ${threadId} at ${unfinished.join(", ")}${opts.request ? " (the request given now is ignored: the thread has unfinished work)" : ""}`,
    );
    const pending = before.tasks.flatMap((t) => t.interrupts);
    if (pending.length === 0) return { input: null };
    if (!opts.ask)
      return {
        done: report(
          before.values as CoderStateValue,
          "needs_human",
          questionOf(pending[0]?.value),
        ),
      };
    return { input: new Command({ resume: await opts.ask(questionOf(pending[0]?.value)) }) };
  }
  if (!opts.request && opts.threadId === undefined)
    throw new UsageError(
      'no request: keel run "<request>" starts a run; keel run --thread ID resumes one',
    );
  if (!opts.request) {
    const status = before.createdAt
      ? (before.values as Partial<CoderStateValue>).status
      : undefined;
    throw new UsageError(
      status
        ? `thread ${threadId} is finished (${status}); nothing to resume. To continue it, give a request: ${resumeCommand(threadId, opts.where, true)}`
        : `thread ${threadId} does not exist yet; start it with a request: ${resumeCommand(threadId, opts.where, true)}`,
    );
  }
  const input = { messages: [new HumanMessage(opts.request)] };
  opts.log(`thread ${threadId}`);
  return { input };
}

/** Shows one graph stream on the timeline: the model's reply as it streams, keel's events, each step. */
async function showStream(
  stream: AsyncIterable<[string, unknown]>,
  log: (line: string) => void,
  reply: ReturnType<typeof createReplyPrinter>,
  quiet: ReturnType<typeof quietNotices>,
): Promise<void> {
  for await (const [mode, chunk] of stream) {
    quiet.touch(
      mode === "updates" ? waitingAfter(chunk as Record<string, CoderStateUpdate>) : undefined,
    );
    if (mode === "messages") {
      const [message, meta] = chunk as [
        { content?: unknown; getType?: () => string },
        { langgraph_node?: string },
      ];
      // Only the model's own words: keel's notes to the model are not part of its reply.
      if (
        meta?.langgraph_node === "act" &&
        message.getType?.() !== "human" &&
        typeof message.content === "string"
      ) {
        // Chunks as the reply streams; then LangGraph sends the message the turn kept, again.
        if (isBaseMessageChunk(message)) reply.text(message.content);
        else reply.whole(message.content);
      }
    } else if (mode === "custom") for (const l of describeEvent(chunk as KeelEvent)) log(l);
    else if (mode === "updates") {
      reply.flush();
      for (const [node, update] of Object.entries(chunk as Record<string, CoderStateUpdate>)) {
        for (const l of describeUpdate(node, update)) log(l);
      }
    }
  }
}

/** The outcome of a run a model server failed or a signal stopped; any other error is rethrown. */
async function failedOutcome(
  err: unknown,
  opts: SessionOptions,
  store: string,
  threadId: string,
  values: () => Promise<CoderStateValue | undefined>,
  report: Report,
): Promise<RunOutcome> {
  if (err instanceof ModelServerError) {
    const o = report(await values(), "error");
    return {
      ...o,
      failures: [...o.failures, { stage: "server", kind: err.kind, count: 1 }],
      error: err.message,
      exitCode: 3,
    };
  }
  if (opts.signal?.aborted || isGraphDrained(err)) {
    // Ctrl-C or SIGTERM: the last completed step is checkpointed; the step in flight reruns on resume.
    const o = report(await values(), "interrupted");
    return {
      ...o,
      summary:
        store === "memory"
          ? "Interrupted; --checkpoints memory kept nothing of it."
          : `Interrupted. Resume with: ${resumeCommand(threadId, opts.where)}`,
    };
  }
  throw err;
}

/** The nodes a thread still has to run: `next`, or the pending tasks when `next` is empty. */
export function pendingNodes(snapshot: {
  next: readonly string[];
  tasks: ReadonlyArray<{ name: string }>;
}): string[] {
  return snapshot.next.length > 0 ? [...snapshot.next] : snapshot.tasks.map((t) => t.name);
}

export class UsageError extends Error {
  override name = "UsageError";
}

function questionOf(value: unknown): string {
  const q = (value as { question?: unknown } | undefined)?.question;
  return typeof q === "string" ? q : JSON.stringify(value);
}
