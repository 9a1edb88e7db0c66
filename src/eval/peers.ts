/**
 * The agents keel is measured against in keel eval: LangGraph's prebuilt ReAct agent and
 * langchain's createAgent, bare, with the same model, server, temperature, window and tools as
 * keel's run (keel's own tool implementations, in the same workspace and sandbox), and the same
 * budget of model turns. No repairs, no salvage, no plan, no guards: what a user gets without keel.
 * A call is well formed when its tool exists and its arguments pass the tool's schema as sent.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import type { createAgent } from "langchain";
import { isolationOf, settingsFrom, type SettingsInput } from "../coder/context.js";
import { toolResultLimit } from "../guard/context-budget.js";
import { createChatModel, loadProvider } from "../models/chat-model.js";
import { ALL_TOOLS, toolsForIntent } from "../tools/registry.js";

/**
 * langchain's `createAgent`, for the `create-agent` peer. `langchain` is an optional peer
 * dependency of keel (nothing else needs it): when it is not installed, an error that says how to
 * install it.
 */
export async function loadCreateAgent(): Promise<typeof createAgent> {
  try {
    return (await import("langchain")).createAgent;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw err;
    throw new Error(
      "the create-agent peer is langchain's createAgent, and the langchain package is not installed: npm install langchain (next to keel-agent)",
      { cause: err },
    );
  }
}

/** Who runs the tasks: keel, or one of the bare agents. The one list of them. */
export const EVAL_AGENTS = ["keel", "react", "create-agent"] as const;
export type EvalAgent = (typeof EVAL_AGENTS)[number];

/** What one bare-agent attempt did. */
export interface PeerOutcome {
  /** done; limit (the turn budget ran out); error (the run threw: message in `error`). */
  status: "done" | "limit" | "error";
  error?: string;
  /** The last assistant text: the answer the task checks. */
  answer: string;
  calls: number;
  wellFormed: number;
  turns: number;
  promptTokens: number;
}

/** The bare agent's chat model: keel's provider model with the run's settings (no keel wire fixes matter here). */
async function peerModel(s: ReturnType<typeof settingsFrom>): Promise<BaseChatModel> {
  await loadProvider(s.provider);
  return createChatModel({
    provider: s.provider,
    model: s.model,
    ollamaUrl: s.ollamaUrl ?? "",
    serverUrl: s.serverUrl,
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
    temperature: s.temperature,
    numCtx: s.contextWindow,
    requestTimeoutMs: s.requestTimeoutMs,
  });
}

/** Counts the calls of a finished conversation and the well-formed ones among them. */
export function countCalls(messages: readonly BaseMessage[]): {
  calls: number;
  wellFormed: number;
} {
  let calls = 0;
  let wellFormed = 0;
  for (const m of messages) {
    if (!AIMessage.isInstance(m)) continue;
    calls += (m.invalid_tool_calls ?? []).length;
    for (const c of m.tool_calls ?? []) {
      calls++;
      const t = ALL_TOOLS.find((x) => x.name === c.name);
      if (t?.schema.safeParse(c.args).success) wellFormed++;
    }
  }
  return { calls, wellFormed };
}

/** Runs `request` with the bare `agent` in `settings.workspace`; never throws for the agent's own failures. */
export async function runPeer(
  agent: Exclude<EvalAgent, "keel">,
  request: string,
  settings: SettingsInput & { workspace: string },
): Promise<PeerOutcome> {
  const s = settingsFrom({ context: settings });
  const model = await peerModel(s);
  const ctx = {
    workspace: settings.workspace,
    commandTimeoutMs: s.commandTimeoutMs,
    toolTimeoutMs: s.toolTimeoutMs,
    outputLimit: toolResultLimit(s.contextWindow),
    isolation: isolationOf(s),
  };
  const tools = toolsForIntent("build").map((t) =>
    tool(
      async (args: unknown) => {
        const r = await t.run(args, ctx);
        return r.ok ? r.output : r.message;
      },
      { name: t.name, description: t.description, schema: t.schema },
    ),
  );
  const graph =
    agent === "create-agent"
      ? (await loadCreateAgent())({ model, tools, checkpointer: new MemorySaver() })
      : createReactAgent({ llm: model, tools, checkpointSaver: new MemorySaver() });
  // a model turn and a tool step per turn: the same budget of model turns as keel's
  const config = { configurable: { thread_id: "peer" }, recursionLimit: 2 * s.maxTurns + 1 };
  let messages: BaseMessage[];
  let status: PeerOutcome["status"] = "done";
  let error: string | undefined;
  try {
    const out = await graph.invoke({ messages: [new HumanMessage(request)] }, config);
    messages = out.messages;
  } catch (err) {
    const e = err as Error;
    status = e.name === "GraphRecursionError" ? "limit" : "error";
    error = e.message;
    const state = await graph.getState(config);
    messages = (state.values as { messages?: BaseMessage[] }).messages ?? [];
  }
  const ai = messages.filter((m) => AIMessage.isInstance(m));
  const last = ai.at(-1);
  return {
    status,
    ...(error ? { error } : {}),
    answer: last ? (typeof last.content === "string" ? last.content : last.text) : "",
    ...countCalls(messages),
    turns: ai.length,
    promptTokens: ai.reduce((n, m) => n + (m.usage_metadata?.input_tokens ?? 0), 0),
  };
}
