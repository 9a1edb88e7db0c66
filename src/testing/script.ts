/** Helpers for writing scripted (fake) model behaviour against keel's graphs. */
import type { AnswerReply, ChatView, Script, ScriptedCall } from "./fake-ollama/index.js";

/** A tool call in a scripted reply. */
export const call = (name: string, args: Record<string, unknown> | string = {}): ScriptedCall => ({
  name,
  arguments: args,
});

/** A reply made only of tool calls. */
export const calls = (...c: ScriptedCall[]): AnswerReply => ({ content: "", toolCalls: c });

/**
 * Text with the shell brace forms keel's fold record names targets in (`notes/n{0..5}.md`,
 * `src/{a.ts,b.ts}`) written out, one name each, as a model reads them: a script can then ask
 * whether the conversation mentions a path.
 */
export function expandBraces(text: string): string {
  return text
    .replace(
      /([\w./@+-]*)\{(\d+)\.\.(\d+)\}([\w.@+-]*)/g,
      (_, head: string, a: string, b: string, tail: string) =>
        Array.from(
          { length: Number(b) - Number(a) + 1 },
          (_, i) => `${head}${Number(a) + i}${tail}`,
        ).join(" "),
    )
    .replace(/([\w./@+-]*\/)\{([^{}]+)\}/g, (_, folder: string, names: string) =>
      names
        .split(",")
        .map((n) => `${folder}${n}`)
        .join(" "),
    );
}

/** The content of the newest tool result the model is reacting to ("" if none). */
export const lastResult = (req: ChatView): string =>
  req.toolResults[req.toolResults.length - 1]?.content ?? "";

/** The request is keel's forced tool-less summary turn. */
export const isSummaryTurn = (req: ChatView): boolean =>
  Boolean(req.last?.content.startsWith("[keel] The run is being stopped"));

/**
 * Wraps a script of model turns so keel's own calls get valid answers — structured output (intent
 * fallback, plan) and the forced summary turn — leaving `act` to decide only the model's turns.
 */
export function keelScript(
  act: Script,
  opts: { plan?: string[]; intent?: string; summary?: string } = {},
): Script {
  return (req) => {
    if (isSummaryTurn(req))
      return { content: opts.summary ?? "I wrote what I could; the task is not finished." };
    if (req.structured) {
      if (req.formatKeys.includes("steps"))
        return { content: JSON.stringify({ steps: opts.plan ?? ["Do what the request asks"] }) };
      if (req.formatKeys.includes("intent"))
        return { content: JSON.stringify({ intent: opts.intent ?? "build" }) };
      return { content: "{}" };
    }
    return act(req);
  };
}

/**
 * A scripted analyst model: answers unit, folder and report requests with valid JSON derived from
 * the request itself, so the same input always gets the same answer (reports can be compared).
 */
export function analystScript(): Script {
  return (req) => {
    const text = req.messages.map((m) => m.content).join("\n");
    if (req.formatKeys.includes("keySymbols")) {
      const unit = /<unit path="([^"]+)"[^>]*part="(\d+) of (\d+)"/.exec(text);
      const p = unit?.[1] ?? "?";
      const symbols = /symbols: (.*)/.exec(text)?.[1]?.split(", ").slice(0, 3) ?? [];
      return {
        content: JSON.stringify({
          purpose: `Scripted finding for ${p}.`,
          keySymbols: symbols.filter((s) => s !== "none"),
          dependencies: [],
          risks: /TODO/.test(text) ? [`${p} has TODO markers`] : [],
          summary: `Part ${unit?.[2] ?? 1} of ${unit?.[3] ?? 1} of ${p} (scripted).`,
        }),
      };
    }
    if (req.formatKeys.includes("architecture")) {
      const folders = (text.match(/^[^\n<]+\/: /gm) ?? []).length;
      return {
        content: JSON.stringify({
          architecture: `Scripted architecture over ${folders} folders.`,
          mainFlows: ["scripted flow"],
          hotspots: ["scripted hotspot"],
          risks: [],
          summary: "Scripted synthesis.",
        }),
      };
    }
    if (req.formatKeys.includes("purpose")) {
      const folder = /<folder path="([^"]+)"/.exec(text)?.[1] ?? "?";
      const files = (text.match(/^[^\n<]+: Scripted finding/gm) ?? []).length;
      return {
        content: JSON.stringify({
          purpose: `Scripted summary of ${folder}.`,
          summary: `${files} files summarised (scripted).`,
        }),
      };
    }
    return { content: "{}" };
  };
}
