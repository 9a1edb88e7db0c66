/**
 * The generation budget of every model call, by call kind: how many tokens the server may
 * generate (`max_tokens` on an OpenAI-compatible server, `num_predict` on Ollama). Without one a
 * reply that rambles runs until the context is full (a real llama-server took 81–104 s per
 * planning call on a CPU). And how to tell a reply the budget cut: `finish_reason: "length"`
 * (OpenAI-compatible) or `done_reason: "length"` (Ollama) — whatever call it was writing is cut
 * too, and must never run.
 */
import type { AIMessage } from "@langchain/core/messages";
import { z } from "zod";
import { rawArguments } from "./reply-facts.js";
import type { WireFacts } from "./wire.js";

/** The kinds of model call keel makes; each has its own budget. */
export const CALL_KINDS = ["classify", "plan", "act", "summary", "analyze"] as const;
export type CallKind = (typeof CALL_KINDS)[number];

/**
 * Defaults: intent classification answers one word of JSON; a plan is a few short steps; an act
 * turn must hold a write_file of a real file (a 300-line source file is ~3,500 tokens) plus the
 * thinking before it; the summary turn is a few lines; an analysed unit is a short JSON finding.
 */
export const DEFAULT_BUDGET: Readonly<Record<CallKind, number>> = {
  classify: 256,
  plan: 1024,
  act: 8192,
  summary: 1024,
  analyze: 2048,
};

const tokens = (kind: CallKind, what: string) =>
  z
    .number()
    .int()
    .min(16)
    .default(DEFAULT_BUDGET[kind])
    .describe(`Most tokens the model may generate ${what}`);

/** The run setting: a budget per call kind, each with its default. */
export const GenerationBudgetSchema = z
  .object({
    classify: tokens("classify", "to classify the request's intent"),
    plan: tokens("plan", "for a plan"),
    act: tokens("act", "in one act turn (tool calls with their arguments, e.g. a whole file)"),
    summary: tokens("summary", "in the tool-less summary turn"),
    analyze: tokens("analyze", "for one analysed unit of keel analyze"),
  })
  .prefault({});
export type GenerationBudget = z.output<typeof GenerationBudgetSchema>;

/** The least budget a request is sent with (the setting's own minimum). */
const MIN_BUDGET = 16;

/**
 * What keel's estimate of a prompt may miss, in tokens: what the chat template adds around the
 * messages, and an estimate short of the server's count (measured on the fake llama-server: 8.8%
 * short for a prompt that carried a whole file in a call's arguments).
 */
export const promptMargin = (prompt: number): number => 16 + Math.ceil(prompt * 0.1);

/**
 * A request's generation budget fitted to its window: the call kind's budget, but never more than
 * what the window leaves after the prompt (keel's estimate of it, and `promptMargin`). Without it a
 * reply that runs on meets the end of the context instead of its budget: on a real llama-server at
 * `-c 4096`, 6 of 10 act replies ran to the end of the context with the 8,192-token act budget,
 * and Ollama, unless told not to shift, generates on past it until `num_predict`. The fold keeps
 * the reply's reserve free (guard/context-budget.ts `replyReserve`), so what is left is at least
 * about that reserve.
 */
export function fittedBudget(budget: number, window: number, prompt: number): number {
  const room = Math.floor(window - prompt - promptMargin(prompt));
  return Math.max(MIN_BUDGET, Math.min(budget, room));
}

/**
 * Whether the server stopped the reply at its generation budget: OpenAI's `finish_reason`,
 * Ollama's `done_reason` — as the client libraries keep them in `response_metadata`, or as the
 * wire saw them (`facts`: a streamed reply's metadata loses them).
 */
export function cutAtBudget(
  reply: Pick<AIMessage, "response_metadata">,
  facts?: WireFacts,
): boolean {
  const meta = (reply.response_metadata ?? {}) as Record<string, unknown>;
  return (
    meta.finish_reason === "length" ||
    meta.done_reason === "length" ||
    facts?.finishReason === "length"
  );
}

/**
 * What a reply cut at the budget was doing, for the model and the timeline: the call it was
 * writing (the last one it started: native, dropped by the client as unreadable, or as text) and
 * how much of its arguments arrived.
 */
export function describeCut(reply: AIMessage, budget: number, contextEnd?: number): string {
  const raw = (reply.additional_kwargs?.tool_calls ?? []) as Array<{
    function?: { name?: string; arguments?: string };
  }>;
  const calls = [
    ...raw.map((c) => ({ name: c.function?.name, chars: c.function?.arguments?.length ?? 0 })),
    ...(raw.length
      ? []
      : [...(reply.tool_calls ?? []), ...(reply.invalid_tool_calls ?? [])].map((c) => ({
          name: c.name,
          chars: (rawArguments(c.args) ?? JSON.stringify(c.args ?? {})).length,
        }))),
  ];
  const last = calls.at(-1);
  const text = typeof reply.content === "string" ? reply.content : "";
  const writing = last?.name
    ? `while writing a call to ${last.name} (${last.chars} characters of arguments arrived)`
    : /<tool_call>|<function|\[TOOL_CALLS\]|"name"\s*:/.test(text)
      ? "while writing a tool call as text"
      : "mid-answer";
  const where =
    contextEnd !== undefined
      ? `ran into the end of the server's context (${contextEnd} tokens, the prompt included) before its budget of ${budget} tokens`
      : `was cut at the generation budget of ${budget} tokens`;
  return `your reply ${where} ${writing}; nothing in it was run`;
}

/** What stopped a cut reply, for the model and the timeline (`TurnAnswer.cut`). */
export interface Cut {
  budget: number;
  detail: string;
  /** keel stopped the streamed reply in a loop: the unit it repeated (what it copied, if `echoed`). */
  looped?: string;
  /** What keel stopped was a copy of its own instructions (guard/echo.ts). */
  echoed?: true;
}

/** What stopped a cut reply: the budget, the end of the context, or a loop keel stopped as it streamed. */
export function cutOf(
  reply: AIMessage,
  budget: number,
  facts: WireFacts,
  contextEnd?: number,
): Cut {
  if (facts.looped === undefined) return { budget, detail: describeCut(reply, budget, contextEnd) };
  const unit = facts.looped.trim().slice(0, 80) || JSON.stringify(facts.looped.slice(0, 20));
  const what = facts.echoed
    ? `copied keel's tool instructions word for word ("${unit}…") instead of making a call`
    : `fell into a loop, writing "${unit}" over and over`;
  return {
    budget,
    detail: `your reply ${what}; keel stopped it there and ran none of it`,
    looped: facts.looped,
    ...(facts.echoed ? { echoed: true as const } : {}),
  };
}
