import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { nodeEnv } from "../../runtime.js";
import { type GraphDeps } from "../../../run/model.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { repairNote } from "../../../models/structured.js";
import { askTurn } from "../../turn/ask.js";
import { fitUpdate } from "../../turn/usage.js";
import { planNote, turnSetup } from "../../turn/setup.js";
import { PLAN_ASK } from "./prompt.js";
import { PlanAnswer } from "./schema.js";

const PLAN_SCHEMA = z.toJSONSchema(PlanAnswer) as Record<string, unknown>;

/** The JSON answer, validated; the zod error when it is not a plan. */
function parsePlan(text: string) {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = text;
  }
  return PlanAnswer.safeParse(value);
}

/**
 * Makes a short structured plan (or a new one after a failure, with the failure in the planner's
 * context). The planning request is act's own prompt — system prompt, tools, the conversation —
 * with the question at its end, so the server's KV cache serves act's next turn. The plan joins the
 * conversation as a keel note after it. A plan that never validates becomes the single step "do the
 * request": planning must not be able to stop a run.
 */
export function createPlanNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const env = nodeEnv(config, deps);
    const { intent, tools, mode, base } = await turnSetup(state, env, config);
    const previous = state.planSteps.map((s) => s.title);
    const ask = new HumanMessage({
      content: PLAN_ASK(intent, state.replanReason, previous),
      name: "keel",
    });
    let steps: string[] | undefined;
    let fit = state.fit;
    let history = [...state.messages, ask];
    // One repair turn for an answer that does not validate (small local models drift): the answer
    // and what was wrong with it join the planning conversation, as structuredCall does.
    for (let attempt = 0; attempt < 2 && !steps; attempt++) {
      const answer = await askTurn({
        ...base,
        kind: "plan",
        fit,
        tools,
        mode,
        history,
        structured: PLAN_SCHEMA,
      });
      fit = answer.fit;
      const text = typeof answer.reply.content === "string" ? answer.reply.content : "";
      const checked = parsePlan(text);
      if (checked.success) steps = withoutNumbers(checked.data.steps);
      else
        history = [
          ...history,
          new AIMessage({ content: text }),
          new HumanMessage({
            content:
              answer.cut !== undefined
                ? `That plan was cut at the generation budget of ${answer.cut.budget} tokens. Reply again with a shorter plan: at most 6 steps, one short line each, JSON only.`
                : repairNote(checked.error, text),
            name: "keel",
          }),
        ];
    }
    const planSteps = steps ?? [state.request.split("\n")[0]!.slice(0, 200)];
    return {
      messages: [planNote(planSteps)],
      planAt: state.messages.length,
      planSteps: planSteps.map((title) => ({ title, status: "todo" as const })),
      replanReason: undefined,
      ...fitUpdate(state.fit, fit),
    };
  };
}

/**
 * Steps without the list markers a model copies from the plan it was shown (`1. 1. Create…` after
 * a re-plan): the plan note numbers them itself. A step that was only a marker is dropped.
 */
export function withoutNumbers(steps: readonly string[]): string[] | undefined {
  const out = steps
    .map((s) => s.replace(/^\s*(?:(?:\d+[.):]|[-*•]|\[[ x]\])(?:\s+|$))+/i, "").trim())
    .filter(Boolean);
  return out.length > 0 ? out : undefined;
}
