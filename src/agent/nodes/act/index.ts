import { SystemMessage, type AIMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { readdir } from "node:fs/promises";
import { withModelRetry } from "../../../models/retry.js";
import { toolDefinition, toolsForIntent } from "../../../tools/registry.js";
import { nodeEnv, type GraphDeps } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { classifyReply, visibleText } from "./classify.js";
import { ACT_SYSTEM } from "./prompt.js";

/** True once this run has done what a build/modify/run request needs: written a file or run a command. */
export function hasActed(state: Pick<CoderStateValue, "trail">): boolean {
  return state.trail.some((t) => t.ok && (t.toolClass === "mutate" || t.toolClass === "command"));
}

async function describeWorkspace(root: string): Promise<string> {
  const entries = await readdir(root).catch(() => [] as string[]);
  const shown = entries.filter((e) => e !== ".keel" && e !== ".git").sort();
  return shown.length === 0
    ? "The workspace is empty."
    : `Top-level entries: ${shown.slice(0, 30).join(", ")}${shown.length > 30 ? ", …" : ""}.`;
}

/**
 * One model turn with the intent's toolset bound natively. Classifies the reply and records a
 * failure (empty, prose) for `recover`; a spent turn budget is a failure too, without a model call.
 */
export function createActNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const env = nodeEnv(config, deps);
    if (state.turns >= env.settings.maxTurns) {
      return {
        failure: {
          kind: "budget",
          detail: `the turn budget (${env.settings.maxTurns} model turns) is spent`,
        },
      };
    }
    if (env.settings.toolMode === "prompt") {
      throw new Error(
        'toolMode "prompt" (tools described in the system prompt) is not available yet; use "auto" or "native"',
      );
    }
    const intent = state.intent?.intent ?? "build";
    const tools = toolsForIntent(intent).map(toolDefinition);
    const model = env.model();
    if (!model.bindTools) throw new Error(`the configured model cannot bind tools`);
    const bound = model.bindTools(tools);
    const system = new SystemMessage(
      ACT_SYSTEM(
        intent,
        state.planSteps.map((s) => s.title),
        await describeWorkspace(env.workspace),
      ),
    );
    const reply = await withModelRetry(
      () => bound.invoke([system, ...state.messages], { signal: config.signal }),
      env.policy,
    );
    const ai = reply as AIMessage;
    // Every call needs an id: tool messages answer calls by id (F8).
    ai.tool_calls?.forEach((c, i) => (c.id ||= `call_${state.turns}_${i}`));
    const content = typeof ai.content === "string" ? ai.content : ai.text;
    const kind = classifyReply({
      toolCallCount: ai.tool_calls?.length ?? 0,
      content,
      intent,
      acted: hasActed(state),
    });
    const update: CoderStateUpdate = { messages: [ai], turns: state.turns + 1, failure: null };
    if (kind === "empty")
      update.failure = { kind: "empty", detail: "the model replied with nothing" };
    if (kind === "prose")
      update.failure = { kind: "prose", detail: "the model answered in prose without acting" };
    if (kind === "final") {
      update.status = "done";
      update.summary = visibleText(content);
    }
    return update;
  };
}
