import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { structuredCall } from "../../../models/structured.js";
import { modelFitOf, nodeEnv, type GraphDeps } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { PLAN_SYSTEM, PLAN_USER } from "./prompt.js";
import { PlanAnswer } from "./schema.js";

/**
 * Makes a short structured plan (or a new one after a failure, with the failure in the planner's
 * context). A plan that never validates becomes the single step "do the request": planning must
 * not be able to stop a run.
 */
export function createPlanNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const env = nodeEnv(config, deps);
    const previous = state.planSteps.map((s) => s.title);
    const answer = await structuredCall(
      env.model((await modelFitOf(env, deps)).fit),
      PlanAnswer,
      PLAN_SYSTEM,
      PLAN_USER(state.request, state.intent?.intent ?? "build", state.replanReason, previous),
      env.policy,
    );
    const steps = answer?.steps ?? [state.request.split("\n")[0]!.slice(0, 200)];
    return {
      planSteps: steps.map((title) => ({ title, status: "todo" as const })),
      replanReason: undefined,
    };
  };
}
