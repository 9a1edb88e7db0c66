/**
 * Routers: pure functions of the state that name the next node. `routed` runs one after its node,
 * on the state that node leaves, and `NEXT` lists where each node can go, so Studio draws the real
 * graph.
 */
import { Command, END, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { unansweredCalls } from "./conversation.js";
import { stateAfter, type CoderStateUpdate, type CoderStateValue } from "./state.js";

export const NODE = {
  intentClassify: "intent-classify",
  plan: "plan",
  act: "act",
  toolExecute: "tool-execute",
  recover: "recover",
} as const;

/** Where each routed node can go next (its router's possible answers). */
export const NEXT = {
  [NODE.intentClassify]: [NODE.plan, NODE.act],
  [NODE.act]: [NODE.toolExecute, NODE.recover, END],
  [NODE.toolExecute]: [NODE.toolExecute, NODE.act, NODE.recover],
  [NODE.recover]: [NODE.act, NODE.plan, END],
} as const;
type Next<N extends keyof typeof NEXT> = (typeof NEXT)[N][number];

type CoderNode = (
  state: CoderStateValue,
  config: LangGraphRunnableConfig,
) => CoderStateUpdate | Promise<CoderStateUpdate>;

/**
 * A node that names its next node: it returns its update together with the router's choice over
 * the state after that update (LangGraph's Command). The decision is the one a conditional edge
 * would make, without a separate router step that re-reads and re-reduces the whole state — a
 * measurable share of every turn.
 */
export function routed<N extends keyof typeof NEXT>(
  node: CoderNode,
  router: (state: CoderStateValue) => Next<N>,
  /** Runs when the router ends the run, with the run's final state (keel's learning ledger). */
  atEnd?: (state: CoderStateValue, config: LangGraphRunnableConfig) => Promise<void>,
) {
  return async (state: CoderStateValue, config: LangGraphRunnableConfig) => {
    const update = await node(state, config);
    const after = stateAfter(state, update);
    const goto = router(after);
    if (goto === END && atEnd) await atEnd(after, config);
    return new Command({ update, goto });
  };
}

/** Chat needs no plan. */
export function routeAfterIntent(state: CoderStateValue): Next<typeof NODE.intentClassify> {
  return state.intent?.intent === "chat" ? NODE.act : NODE.plan;
}

/** Tool calls go to execution, a failure to recovery, a final answer ends the run. */
export function routeAfterAct(state: CoderStateValue): Next<typeof NODE.act> {
  if (state.failure) return NODE.recover;
  if (state.status === "done") return END;
  return unansweredCalls(state.messages).length > 0 ? NODE.toolExecute : NODE.recover;
}

/** F4: after a tool result the model always gets the next turn, unless a guard stops it first. */
export function routeAfterToolExecute(state: CoderStateValue): Next<typeof NODE.toolExecute> {
  if (state.failure) return NODE.recover;
  if (unansweredCalls(state.messages).length > 0) return NODE.toolExecute;
  return NODE.act;
}

export function routeAfterRecover(state: CoderStateValue): Next<typeof NODE.recover> {
  if (state.recoverTo === "plan") return NODE.plan;
  if (state.recoverTo === "end") return END;
  return NODE.act;
}
