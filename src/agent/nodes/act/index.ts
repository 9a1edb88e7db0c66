import { AIMessage, SystemMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { readdir } from "node:fs/promises";
import { chooseToolMode } from "../../../models/capabilities.js";
import { withModelRetry } from "../../../models/retry.js";
import type { ArgSchemas } from "../../../models/tool-calls/types.js";
import { toolDefinition, toolsForIntent } from "../../../tools/registry.js";
import { nodeEnv, type GraphDeps } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { readReply, toPromptHistory } from "./channel.js";
import { classifyReply, visibleText } from "./classify.js";
import { ACT_SYSTEM } from "./prompt.js";
import { promptFormat, TOOLS_IN_PROMPT } from "./tool-prompt.js";

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
 * One model turn through exactly one tool channel: native (tools bound, none described in the
 * prompt) or prompt mode (tools described once, calls parsed from text). Classifies the reply and
 * records a failure (empty, prose, unparseable) for `recover`; a spent turn budget is a failure
 * too, without a model call.
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
    const profile = deps.probe
      ? await deps.probe(env.settings.ollamaUrl, env.settings.model, env.policy)
      : undefined;
    const mode = chooseToolMode(profile, env.settings.toolMode);
    const format = promptFormat(profile?.format ?? "hermes");
    const intent = state.intent?.intent ?? "build";
    const tools = toolsForIntent(intent).map(toolDefinition);
    const model = env.model();
    let system = ACT_SYSTEM(
      intent,
      state.planSteps.map((s) => s.title),
      await describeWorkspace(env.workspace),
    );
    let runnable: Pick<typeof model, "invoke"> = model;
    if (mode === "native") {
      if (!model.bindTools)
        throw new Error('the configured model cannot bind tools; use toolMode "prompt"');
      runnable = model.bindTools(tools);
    } else {
      system += `\n${TOOLS_IN_PROMPT(tools, format)}`;
    }
    const history = mode === "prompt" ? toPromptHistory(state.messages) : state.messages;
    const reply = (await withModelRetry(
      () => runnable.invoke([new SystemMessage(system), ...history], { signal: config.signal }),
      env.policy,
    )) as AIMessage;

    const schemas: ArgSchemas = Object.fromEntries(
      tools.map((t) => [t.function.name, t.function.parameters as ArgSchemas[string]]),
    );
    const read = readReply(reply, {
      mode,
      format,
      toolNames: tools.map((t) => t.function.name),
      schemas,
      idPrefix: `call_${state.turns}`,
    });
    const raw = typeof reply.content === "string" ? reply.content : reply.text;
    const ai = new AIMessage({
      id: reply.id,
      content: read.fromText ? read.content : raw,
      tool_calls: read.calls.map((c, i) => ({ ...c, id: c.id || `call_${state.turns}_${i}` })),
      additional_kwargs: read.fromText ? { keel_raw_text: raw } : {},
      response_metadata: reply.response_metadata,
      ...(reply.usage_metadata ? { usage_metadata: reply.usage_metadata } : {}),
    });
    const kind = read.problem
      ? "unparseable"
      : classifyReply({
          toolCallCount: ai.tool_calls?.length ?? 0,
          content: read.content,
          intent,
          acted: hasActed(state),
        });
    const update: CoderStateUpdate = {
      messages: [ai],
      turns: state.turns + 1,
      failure: null,
      toolChannel: { mode, format, ...(read.fromText ? { salvaged: mode === "native" } : {}) },
    };
    if (kind === "empty")
      update.failure = { kind: "empty", detail: "the model replied with nothing" };
    if (kind === "prose")
      update.failure = { kind: "prose", detail: "the model answered in prose without acting" };
    if (kind === "unparseable") update.failure = { kind: "unparseable", detail: read.problem! };
    if (kind === "final") {
      update.status = "done";
      update.summary = visibleText(read.content);
    }
    return update;
  };
}
