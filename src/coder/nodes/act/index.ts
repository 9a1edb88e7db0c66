/**
 * The act node: one model turn. A spent turn budget is a failure without a model call; when
 * `recover` asks for it, the tool-less summary turn (summary-turn.ts); otherwise a turn with the
 * tools (tool-turn.ts).
 */
import { Overwrite, type LangGraphRunnableConfig } from "@langchain/langgraph";
import type { BaseMessage } from "@langchain/core/messages";
import type { GraphDeps } from "../../../run/model.js";
import { nodeEnv } from "../../runtime.js";
import type { CoderStateUpdate, CoderStateValue } from "../../state.js";
import { pinsOf, turnSetup } from "../../turn/setup.js";
import { archiveFolded } from "../../history/archive.js";
import { movesOut } from "../../channels.js";
import { promptBudget } from "../../history/fit.js";
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
    const setup = await turnSetup(state, env, config);
    const { summaryFor } = state;
    const update = summaryFor
      ? await summaryTurn({ ...state, summaryFor }, env, setup)
      : await toolTurn(state, env, setup);
    return { ...update, ...archiveUpdate(state, update, setup.base.window) };
  };
}

/** The turn's fold, once it leaves enough messages behind the record, moved out of state (archive.ts). */
function archiveUpdate(
  state: CoderStateValue,
  update: CoderStateUpdate,
  window: number,
): CoderStateUpdate {
  const fit = update.fit ?? state.fit;
  const added = update.messages ?? [];
  if (!fit || Overwrite.isInstance(added) || movesOut(added)) return {};
  const move = archiveFolded({
    messages: state.messages,
    added: (Array.isArray(added) ? added : [added]) as BaseMessage[],
    foldedUpTo: fit.foldedUpTo,
    ...(fit.recordAt !== undefined ? { recordAt: fit.recordAt } : {}),
    pinned: pinsOf(state),
    requestAt: state.requestAt,
    planAt: state.planAt,
    budget: promptBudget(Math.min(window, fit.window ?? Infinity)),
    ...(state.carried ? { carried: state.carried } : {}),
    archived: state.archived,
    ...(state.movedTurns ? { movedTurns: state.movedTurns } : {}),
  });
  if (!move) return {};
  const { foldedUpTo, recordAt, ...moved } = move;
  return {
    ...moved,
    fit: { ...fit, foldedUpTo, ...(recordAt !== undefined ? { recordAt } : {}) },
  };
}
