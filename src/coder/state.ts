/**
 * The coder graph's state, declared once. Each field says who writes it and who reads it.
 * The growing collections (messages, the trail, seen files) are delta channels (channels.ts): a
 * checkpoint stores what a step changed, not the whole history.
 *
 * What a model reply tells keel reaches the state only through what act returns: the model call
 * gives its value with the wire's facts of the answer (models/wire.ts `callOverWire`), the turn
 * answer types them (turn/ask.ts `TurnAnswer`: `usage`, `cut`, `fallback`, `fit`), and act's
 * update holds them — the AI message (its calls after the one repair pass, `keel_usage`,
 * `keel_turn`), `failure` (a cut or a looping reply), `toolChannel` (a fallback), `fit`, and
 * `replyNotes` (what tool-execute adds to the calls' results). Nothing travels beside a message
 * for a later node to find.
 */
import { DeltaValue, ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import type { TrailEntry } from "../guard/loop.js";
import type { Carried } from "./history/record.js";
import type { TurnSums } from "./turn-sums.js";
import { addCalls, TRAIL_WINDOW, type CallNote, type CallTally } from "./call-tally.js";
import { FAILURE_KINDS, RUNGS } from "../guard/ladder.js";
import { TOOL_MODES } from "../models/capabilities.js";
import { INTENTS } from "../tools/registry.js";
import { MessagesChannel, SeenChannel, SNAPSHOT_EVERY } from "./channels.js";

/** What decided a request's intent: the rules, or the model when the rules were unsure. */
export const INTENT_SOURCES = ["rules", "model"] as const;

/** A coder run's outcome: running until act ends it (done) or recover does (gave_up, needs_human). */
export const RUN_STATUSES = ["running", "done", "gave_up", "needs_human"] as const;
export type CoderStatus = (typeof RUN_STATUSES)[number];

export const IntentSchema = z.object({
  intent: z.enum(INTENTS),
  confidence: z.number(),
  source: z.enum(INTENT_SOURCES),
});
export type IntentResult = z.infer<typeof IntentSchema>;

export const PlanStepSchema = z.object({
  title: z.string(),
  status: z.enum(["todo", "done"]).default("todo"),
});
export type PlanStep = z.infer<typeof PlanStepSchema>;

/** How act fits the history into the window for one model (history/fit.ts, history/calibrate.ts). */
export const FitStateSchema = z.object({
  /** Messages folded into the record; moves only at a fold, so the prompt's prefix stays cached. */
  foldedUpTo: z.number(),
  /**
   * Where the last fold put the record, when after the turns it kept (a server that shifts its
   * cache: history/fit.ts `shift`); absent: right after the pinned messages.
   */
  recordAt: z.number().optional(),
  /**
   * The server took `n_cache_reuse` but did not shift (a model llama-server cannot shift): folds
   * are plain from then on (turn/usage.ts `shiftRefused`).
   */
  unshifted: z.boolean().optional(),
  /** Server tokens per uncalibrated keel-estimated token in the last counted prompt (for reports). */
  scale: z.number(),
  /**
   * Server tokens per keel-estimated token of each script class (guard/token-estimate.ts
   * TOKEN_CLASSES), learned from the server's prompt counts (history/calibrate.ts). Absent in
   * threads from before per-class calibration: every class at 1.
   */
  scales: z.array(z.number()).optional(),
  /** The model the calibration belongs to. */
  model: z.string(),
  /** Key of what sat before the conversation (system prompt, tools, channel) in the last request. */
  prefix: z.string(),
  /** The server's real window where it is below the run's (from an over-context refusal). */
  window: z.number().optional(),
});
export type FitState = z.infer<typeof FitStateSchema>;

/** What tool-execute adds to one call's result (state `replyNotes`). */
export const ReplyNoteSchema = z.object({
  /** The one repair pass's notes on the call (tools/call-repair.ts). */
  repaired: z.string().optional(),
  /** The note on the entries of the reply's call list that keel could not read. */
  unread: z.string().optional(),
});
export type ReplyNotes = Record<string, z.infer<typeof ReplyNoteSchema>>;

/** What went wrong, for `recover`. */
export const FailureSchema = z.object({
  kind: z.enum(FAILURE_KINDS),
  detail: z.string(),
  /** The forced summary turn for this failure has happened. */
  summarized: z.boolean().optional(),
});
export type Failure = z.infer<typeof FailureSchema>;

export const CoderState = new StateSchema({
  /** The conversation the model sees. Input: the user's request. Written by act, tool-execute, recover. */
  messages: MessagesChannel,
  /** The request of this run. Written by intent-classify (from the last human message); read by plan, act, recover. */
  request: z.string().default(""),
  /**
   * Where the request and the current plan note sit in `messages` (-1: not known), so a turn names
   * the messages a fold keeps without scanning the history. Written by intent-classify and plan; read by turn setup.
   */
  requestAt: z.number().default(-1),
  planAt: z.number().default(-1),
  /**
   * Messages moved out of `messages` after a fold (history/archive.ts): a message's position in the
   * thread is `archived` plus its index. Written by act; read by undo's step records.
   */
  archived: z.number().default(0),
  /** The record's account of the moved messages (history/record.ts). Written by act at a move; read by act's fit. */
  carried: z.custom<Carried>().optional(),
  /**
   * This run's model turns among the moved messages, summed (turn-sums.ts). Written by act at a
   * move (reset by intent-classify); read by the run record and the outcome.
   */
  movedTurns: z.custom<TurnSums>().optional().nullable(),
  /** The workspace's top level when the run started. Written by intent-classify; read by act's prompt. */
  workspaceAtStart: z.string().default(""),
  /** The project's instructions (AGENTS.md), capped, as of the request. Written by intent-classify; read by act's prompt. */
  instructions: z.string().default(""),
  /** Intent and how it was decided. Written by intent-classify; read by plan, act (toolset, prompt), routers. */
  intent: IntentSchema.optional(),
  /** Short plan. Written by plan (and recover via re-plan); read by act's prompt. */
  planSteps: z.array(PlanStepSchema).default(() => []),
  /** Why the last re-plan happened. Written by recover; read by plan. */
  replanReason: z.string().optional(),
  /**
   * The tool channel of the last turn (native or prompt, and the text format), and the server's
   * tool-channel failures this run: after `parseFailures` reach the limit, or a model without tool
   * support, `pinned` keeps the rest of the run in prompt mode. Written by act (reset by
   * intent-classify); read by act and the timeline.
   */
  toolChannel: z
    .object({
      mode: z.enum(TOOL_MODES),
      format: z.string(),
      salvaged: z.boolean().optional(),
      parseFailures: z.number().optional(),
      pinned: z.string().optional(),
    })
    .optional(),
  /** The history's fold point and the token calibration. Written by act when they change; read by act. */
  fit: FitStateSchema.optional(),
  /** Model turns taken this run. Written by act; read by act's budget check and the report. */
  turns: z.number().default(0),
  /**
   * This run's newest tool calls (`TRAIL_WINDOW` of them), in order. Appended by tool-execute (reset
   * by intent-classify); read by the loop guard and the report.
   */
  trail: new DeltaValue(
    z.array(z.custom<TrailEntry>()).default(() => []),
    {
      inputSchema: z.union([z.custom<TrailEntry>(), z.array(z.custom<TrailEntry>())]),
      reducer: (current: TrailEntry[], writes: Array<TrailEntry | TrailEntry[]>) =>
        current.concat(...writes).slice(-TRAIL_WINDOW),
      snapshotFrequency: SNAPSHOT_EVERY,
    },
  ),
  /**
   * All of this run's tool calls, counted per kind (call-tally.ts). Appended by tool-execute (reset
   * by intent-classify); read by act (what the run did), recover's report and the run record.
   */
  callTally: new DeltaValue(
    z.custom<CallTally>().default(() => ({})),
    {
      inputSchema: z.union([z.custom<CallNote>(), z.array(z.custom<CallNote>())]),
      reducer: (current: CallTally, writes: Array<CallNote | CallNote[]>) =>
        addCalls(current, writes.flat()),
      snapshotFrequency: SNAPSHOT_EVERY,
    },
  ),
  /** Workspace-relative files written this run. Appended by tool-execute; read by act (prose check) and the report. */
  // Small and rarely written: a plain reduced value (a delta channel would replay the whole thread to rebuild it).
  filesWritten: new ReducedValue(
    z.array(z.string()).default(() => []),
    {
      inputSchema: z.union([z.string(), z.array(z.string())]),
      reducer: (current: string[], next: string | string[]) => [...new Set(current.concat(next))],
    },
  ),
  /**
   * Files as the model last saw them (read or written), by content hash: edit_file refuses a file
   * missing here or changed on disk since. Merged by tool-execute; kept across the thread's runs,
   * the newest SEEN_WINDOW files (channels.ts), as a delta channel.
   */
  seen: SeenChannel,
  /**
   * What act's reading of the newest reply adds to its calls' results, by call id: what the one
   * repair pass changed in a call (`repaired`, also in the trail) and, with the first call's
   * result, the entries of the call list keel could not read (`unread`). Written by act (null once
   * a reply has none after one that had); read by tool-execute.
   */
  replyNotes: z.record(z.string(), ReplyNoteSchema).optional().nullable(),
  /** Hits per loop (detector + calls). Written by tool-execute; read by tool-execute (a second hit escalates). */
  loopHits: z.record(z.string(), z.number()).default(() => ({})),
  /** Set by recover for the forced tool-less summary turn; read and cleared by act. */
  summaryFor: FailureSchema.optional().nullable(),
  /** Consecutive failed tool calls. Written by tool-execute (reset by recover); read by tool-execute (a streak is a failure). */
  errorStreak: z.number().default(0),
  /** The highest rung of the recovery ladder this run reached. Written by recover (reset by intent-classify); read by keel stats. */
  rung: z.enum(RUNGS).default("none"),
  /**
   * One line of learned usage per tool for this run's model (learning/lessons.ts), chosen once per
   * request so the tool block of the prompt stays the same all run. Written by intent-classify; read by act.
   */
  lessons: z
    .record(z.string(), z.object({ key: z.string(), line: z.string() }))
    .default(() => ({})),
  /** Strikes per failure kind. Written by recover; read by recover. */
  strikes: z.record(z.string(), z.number()).default(() => ({})),
  /** The failure to handle. Written by act / tool-execute; read by routers and recover, cleared by recover. */
  failure: FailureSchema.optional().nullable(),
  /** Outcome of the run. Written by act (done) and recover (gave_up / needs_human). Read by the CLI. */
  status: z.enum(RUN_STATUSES).default("running"),
  /** Final answer or report. Written by act / recover; read by the CLI. */
  summary: z.string().default(""),
});

export type CoderStateValue = typeof CoderState.State;
export type CoderStateUpdate = typeof CoderState.Update;
