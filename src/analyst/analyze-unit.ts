/**
 * One unit's model analysis within the context budget: the file is cut into parts that fit
 * (quick depth reads only the first), each part gets one structured call, and the parts' findings
 * are merged without another call.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { CHARS_PER_TOKEN, estimateTokens, replyReserve } from "../guard/context-budget.js";
import { ModelServerError } from "../models/errors.js";
import { structuredCall } from "../models/structured.js";
import type { RetryPolicy } from "../models/retry.js";
import type { FileUnit } from "./enumerate.js";
import { FolderSummary, ReportSynthesis, UnitFinding } from "./schema.js";
import {
  FOLDER_SYSTEM,
  FOLDER_USER,
  REPORT_SYSTEM,
  REPORT_USER,
  UNIT_SYSTEM,
  UNIT_USER,
} from "./prompts.js";
import type { UnitFacts } from "./structure.js";

/** How much of a file the analyst reads: the start of it (quick), or every part (deep). */
export const ANALYSIS_DEPTHS = ["quick", "deep"] as const;
export type AnalysisDepth = (typeof ANALYSIS_DEPTHS)[number];

export interface Budgeted {
  model: BaseChatModel;
  policy: RetryPolicy;
  /** Context window in tokens. */
  window: number;
  /** Called with the size of every request (the server's count, else keel's estimate), for the largest-request figure. */
  onRequest?: (tokens: number) => void;
  /** The generation budget of one unit's call (settings `generationBudget.analyze`). */
  maxTokens?: number;
}

/**
 * What the model may spend on one request's text: a quarter of the window stays free for the
 * finding (each unit is a fresh prompt, so no cache is lost by reserving more than the coder does).
 */
const inputBudget = (window: number) => window - 2 * replyReserve(window) - 300;

/** Cuts text into parts of at most `maxChars`, at line ends where possible. */
export function splitText(text: string, maxChars: number): string[] {
  if (text.length <= maxChars) return [text];
  const parts: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(text.length, at + maxChars);
    const nl = text.lastIndexOf("\n", end);
    if (end < text.length && nl > at + maxChars / 2) end = nl + 1;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

export function describeFacts(f: UnitFacts, limit = 1200): string {
  const text = [
    `imports: ${f.imports.join(", ") || "none"}`,
    `symbols: ${f.symbols.map((s) => `${s.exported ? "export " : ""}${s.kind} ${s.name}`).join(", ") || "none"}`,
    f.todos ? `TODO/FIXME markers: ${f.todos}` : "",
  ]
    .filter(Boolean)
    .join("\n");
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

async function ask<S extends Parameters<typeof structuredCall>[1]>(
  b: Budgeted,
  schema: S,
  system: string,
  user: string,
) {
  // The server's count of each prompt where it reports one (keel's estimate misses the template
  // and the schema the request carries), else keel's estimate.
  let counted = false;
  try {
    return await structuredCall(b.model, schema, system, user, b.policy, {
      ...(b.maxTokens !== undefined ? { maxTokens: b.maxTokens } : {}),
      window: b.window,
      onPrompt: (tokens) => {
        counted = true;
        b.onRequest?.(tokens);
      },
    });
  } finally {
    if (!counted) b.onRequest?.(estimateTokens(system + user) + 16);
  }
}

/**
 * Asks for one part's finding; a part the server refuses as over its context (keel's estimate was
 * short of the server's count) is halved and each half asked, at most `depth` times over.
 */
async function askWithin(
  part: string,
  asked: (part: string) => Promise<UnitFinding | null>,
  depth = 3,
): Promise<UnitFinding[]> {
  try {
    const f = await asked(part);
    return f ? [f] : [];
  } catch (err) {
    if (!(err instanceof ModelServerError) || err.kind !== "truncated" || depth === 0) throw err;
    if (part.length < 1000) throw err;
    const halves = splitText(part, Math.ceil(part.length / 2));
    const out: UnitFinding[] = [];
    for (const half of halves) out.push(...(await askWithin(half, asked, depth - 1)));
    return out;
  }
}

/** Analyses one file; `null` when no part produced a valid finding. */
export async function analyzeUnit(
  b: Budgeted,
  unit: FileUnit,
  text: string,
  facts: UnitFacts,
  depth: AnalysisDepth,
): Promise<UnitFinding | null> {
  const factText = describeFacts(facts);
  const overhead =
    estimateTokens(UNIT_SYSTEM + UNIT_USER(unit.path, unit.language, factText, "", 0, 1)) + 32;
  // Characters per token of this text as keel estimates it (dense code, numbers and CJK take more
  // tokens per character than prose), never more than the conservative 3.5.
  const perToken = Math.min(CHARS_PER_TOKEN, text.length / Math.max(1, estimateTokens(text)));
  const maxChars = Math.max(500, Math.floor((inputBudget(b.window) - overhead) * perToken));
  const parts = splitText(text, maxChars);
  const used = depth === "quick" ? parts.slice(0, 1) : parts;
  const findings: UnitFinding[] = [];
  for (let i = 0; i < used.length; i++) {
    const asked = (part: string) =>
      ask(
        b,
        UnitFinding,
        UNIT_SYSTEM,
        UNIT_USER(unit.path, unit.language, factText, part, i, parts.length),
      );
    findings.push(...(await askWithin(used[i]!, asked)));
  }
  if (findings.length === 0) return null;
  const uniq = (xs: string[], n: number) =>
    [...new Set(xs.map((x) => x.trim()).filter(Boolean))].slice(0, n);
  return {
    purpose: findings[0]!.purpose,
    keySymbols: uniq(
      findings.flatMap((f) => f.keySymbols),
      20,
    ),
    dependencies: uniq(
      findings.flatMap((f) => f.dependencies),
      20,
    ),
    risks: uniq(
      findings.flatMap((f) => f.risks),
      12,
    ),
    summary:
      findings.length === 1
        ? findings[0]!.summary
        : uniq(
            findings.map((f) => f.summary),
            6,
          )
            .join(" ")
            .slice(0, 900),
  };
}

/** Keeps whole lines of a list while they fit `maxChars`; notes how many were left out. */
export function fitLines(lines: string[], maxChars: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (const l of lines) {
    if (used + l.length + 1 > maxChars) {
      out.push(`(${lines.length - out.length} more not shown)`);
      break;
    }
    out.push(l);
    used += l.length + 1;
  }
  return out;
}

/** Summarises a folder from its files' and subfolders' lines, within the budget. */
export async function summarizeFolder(
  b: Budgeted,
  path: string,
  files: string[],
  folders: string[],
): Promise<FolderSummary | null> {
  const room = Math.floor((inputBudget(b.window) - estimateTokens(FOLDER_SYSTEM) - 40) * 3.5);
  return shrinkOnRefusal((share) => {
    const maxChars = Math.floor(room * share);
    const f = fitLines(files, folders.length ? Math.floor(maxChars / 2) : maxChars);
    const d = fitLines(folders, maxChars - f.join("\n").length);
    return ask(b, FolderSummary, FOLDER_SYSTEM, FOLDER_USER(path, f, d));
  });
}

/**
 * Asks with the whole room (`share` 1), and again with half as much each time the server refuses
 * the prompt as over its context; after three refusals the answer is null (the report goes on
 * without it).
 */
async function shrinkOnRefusal<T>(asked: (share: number) => Promise<T | null>): Promise<T | null> {
  for (let share = 1; share >= 1 / 8; share /= 2) {
    try {
      return await asked(share);
    } catch (err) {
      if (!(err instanceof ModelServerError) || err.kind !== "truncated") throw err;
    }
  }
  return null;
}

/** The whole-codebase synthesis, within the budget. */
export async function synthesize(
  b: Budgeted,
  folders: string[],
  graph: string[],
  hot: string[],
): Promise<ReportSynthesis | null> {
  const room = Math.floor((inputBudget(b.window) - estimateTokens(REPORT_SYSTEM) - 60) * 3.5);
  return shrinkOnRefusal((share) => {
    const maxChars = Math.floor(room * share);
    const g = fitLines(graph, Math.floor(maxChars * 0.2));
    const h = fitLines(hot, Math.floor(maxChars * 0.2));
    const f = fitLines(folders, maxChars - g.join("\n").length - h.join("\n").length);
    return ask(b, ReportSynthesis, REPORT_SYSTEM, REPORT_USER(f, g, h));
  });
}
