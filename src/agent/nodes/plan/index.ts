import { HumanMessage } from "@langchain/core/messages";
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { z } from "zod";
import { nodeEnv } from "../../runtime.js";
import { type GraphDeps } from "../../../run/model.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { askTurn } from "../../turn/ask.js";
import { planNote, turnSetup } from "../../turn/setup.js";
import { PLAN_ASK } from "./prompt.js";
import { PlanAnswer } from "./schema.js";

const PLAN_SCHEMA = z.toJSONSchema(PlanAnswer) as Record<string, unknown>;

/** The JSON answer, validated; null when it is not a plan. */
function parsePlan(text: string): string[] | null {
  try {
    const checked = PlanAnswer.safeParse(JSON.parse(text));
    return checked.success ? checked.data.steps : null;
  } catch {
    return null;
  }
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
    const { intent, tools, mode, base } = await turnSetup(state, env, deps, config);
    const previous = state.planSteps.map((s) => s.title);
    const ask = new HumanMessage({
      content: PLAN_ASK(intent, state.replanReason, previous),
      name: "keel",
    });
    let steps: string[] | null = null;
    let fit = state.fit;
    // One repair turn for an answer that does not validate: small local models drift.
    for (let attempt = 0; attempt < 2 && !steps; attempt++) {
      const answer = await askTurn({
        ...base,
        fit,
        tools,
        mode,
        history: [...state.messages, ask],
        structured: PLAN_SCHEMA,
      });
      fit = answer.fit;
      const text = typeof answer.reply.content === "string" ? answer.reply.content : "";
      steps = parsePlan(text);
    }
    const planSteps = steps ?? [state.request.split("\n")[0]!.slice(0, 200)];
    return {
      messages: [planNote(planSteps)],
      planSteps: planSteps.map((title) => ({ title, status: "todo" as const })),
      replanReason: undefined,
      ...(fit && fit !== state.fit ? { fit } : {}),
    };
  };
}
