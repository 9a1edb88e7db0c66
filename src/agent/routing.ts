/**
 * Routers: pure functions of the state that name the next node. Each returns a literal union and
 * graph.ts passes the explicit path map, so Studio draws the real graph.
 */
import { END } from "@langchain/langgraph";
import { unansweredCalls } from "./nodes/tool-execute.js";
import type { CoderStateValue } from "./state.js";

export const NODE = {
  intentClassify: "intent-classify",
  plan: "plan",
  act: "act",
  toolExecute: "tool-execute",
  recover: "recover",
} as const;

/** Chat needs no plan. */
export function routeAfterIntent(state: CoderStateValue): typeof NODE.plan | typeof NODE.act {
  return state.intent?.intent === "chat" ? NODE.act : NODE.plan;
}

/** Tool calls go to execution, a failure to recovery, a final answer ends the run. */
export function routeAfterAct(
  state: CoderStateValue,
): typeof NODE.toolExecute | typeof NODE.recover | typeof END {
  if (state.failure) return NODE.recover;
  if (state.status === "done") return END;
  return unansweredCalls(state.messages).length > 0 ? NODE.toolExecute : NODE.recover;
}

/** F4: after a tool result the model always gets the next turn, unless a guard stops it first. */
export function routeAfterToolExecute(
  state: CoderStateValue,
): typeof NODE.toolExecute | typeof NODE.act | typeof NODE.recover {
  if (state.failure) return NODE.recover;
  if (unansweredCalls(state.messages).length > 0) return NODE.toolExecute;
  return NODE.act;
}

export function routeAfterRecover(
  state: CoderStateValue,
): typeof NODE.act | typeof NODE.plan | typeof END {
  if (state.recoverTo === "plan") return NODE.plan;
  if (state.recoverTo === "end") return END;
  return NODE.act;
}
