/**
 * The act node: one model turn. A spent turn budget is a failure without a model call; when
 * `recover` asks for it, the tool-less summary turn (summary-turn.ts); otherwise a turn with the
 * tools (tool-turn.ts).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { GraphDeps } from "../../../run/model.js";
import { nodeEnv } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { turnSetup } from "../../turn/setup.js";
import { summaryTurn } from "./summary-turn.js";
import { toolTurn } from "./tool-turn.js";

export function createActNode(deps: GraphDeps) {
  return async (
    state: CoderStateValue,
    config: LangGraphRunnableConfig,
  ): Promise<CoderStateUpdate> => {
    const env = nodeEnv(config, deps);
    if (!state.summaryFor && state.turns >= env.settings.maxTurns) {
      return {
        failure: {
          kind: "budget",
          detail: `the turn budget (${env.settings.maxTurns} model turns) is spent`,
        },
      };
    }
    const setup = await turnSetup(state, env, deps, config);
    const { summaryFor } = state;
    return summaryFor
      ? summaryTurn({ ...state, summaryFor }, env, setup)
      : toolTurn(state, env, setup);
  };
}
