/** Helpers for writing scripted (fake) model behaviour against keel's graphs. */
import type { AnswerReply, ChatView, Script, ScriptedCall } from "./fake-ollama/index.js";

/** A tool call in a scripted reply. */
export const call = (name: string, args: Record<string, unknown> | string = {}): ScriptedCall => ({
  name,
  arguments: args,
});

/** A reply made only of tool calls. */
export const calls = (...c: ScriptedCall[]): AnswerReply => ({ content: "", toolCalls: c });

/** The content of the newest tool result the model is reacting to ("" if none). */
export const lastResult = (req: ChatView): string =>
  req.toolResults[req.toolResults.length - 1]?.content ?? "";

/**
 * Wraps a script of model turns so keel's structured calls (intent fallback, plan) get valid
 * answers, leaving `act` to decide only the model's turns.
 */
export function keelScript(act: Script, opts: { plan?: string[]; intent?: string } = {}): Script {
  return (req) => {
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
