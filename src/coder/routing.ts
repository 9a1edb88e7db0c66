/**
 * Routers: pure functions that name the next node from what the node just decided — the state it
 * started from and the update it returns. `routed` runs one after its node, and `NEXT` lists where
 * each node can go, so Studio draws the real graph.
 */
import { Command, END, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { unansweredAfter, withMessageIds } from "./conversation.js";
import type { CoderStateUpdate, CoderStateValue } from "./state.js";

export const NODE = {
  intentClassify: "intent-classify",
  plan: "plan",
  act: "act",
  toolExecute: "tool-execute",
  recover: "recover",
} as const;

/** Where each routed node can go next (its router's possible answers): the graph's path maps. */
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

/** A router: the next node, from the state a node started from and the update it decided. */
type Router<N extends keyof typeof NEXT> = (
  state: CoderStateValue,
  update: CoderStateUpdate,
) => Next<N>;

/**
 * A node that names its next node: it returns its update together with its router's choice
 * (LangGraph's Command). The decision is the one a conditional edge would make, without a
 * separate router step that re-reads and re-reduces the whole state — a measurable share of
 * every turn.
 */
export function routed<N extends keyof typeof NEXT>(node: CoderNode, router: Router<N>) {
  const identified = withIds(node);
  return async (state: CoderStateValue, config: LangGraphRunnableConfig) => {
    const update = await identified(state, config);
    return new Command({ update, goto: router(state, update) });
  };
}

/** A node whose new messages get keel's short ids (conversation.ts `withMessageIds`). */
export function withIds(node: CoderNode) {
  return async (state: CoderStateValue, config: LangGraphRunnableConfig) =>
    withMessageIds(state, await node(state, config));
}

/** A plain field as the node leaves it: its update's value, else the state's. */
const decided = <K extends "failure" | "intent">(
  state: CoderStateValue,
  update: CoderStateUpdate,
  key: K,
) => (update[key] !== undefined ? update[key] : state[key]);

/** Chat needs no plan. */
export function routeAfterIntent(
  state: CoderStateValue,
  update: CoderStateUpdate,
): Next<typeof NODE.intentClassify> {
  return decided(state, update, "intent")?.intent === "chat" ? NODE.act : NODE.plan;
}

/** Tool calls go to execution, a failure to recovery, a final answer ends the run. */
export function routeAfterAct(
  state: CoderStateValue,
  update: CoderStateUpdate,
): Next<typeof NODE.act> {
  if (decided(state, update, "failure")) return NODE.recover;
  if (update.status === "done") return END;
  return unansweredAfter(state.messages, update.messages).length > 0
    ? NODE.toolExecute
    : NODE.recover;
}

/** F4: after a tool result the model always gets the next turn, unless a guard stops it first. */
export function routeAfterToolExecute(
  state: CoderStateValue,
  update: CoderStateUpdate,
): Next<typeof NODE.toolExecute> {
  if (decided(state, update, "failure")) return NODE.recover;
  if (unansweredAfter(state.messages, update.messages).length > 0) return NODE.toolExecute;
  return NODE.act;
}

/**
 * A run recover stopped (`gave_up`, `needs_human`) ends; a re-plan (`replanReason` written) goes
 * to plan; everything else (a hint, the summary turn, a person's answer) back to act.
 */
export function routeAfterRecover(
  _state: CoderStateValue,
  update: CoderStateUpdate,
): Next<typeof NODE.recover> {
  return recoverGoesTo(update);
}

/** Where recover's update sends the run (also what the timeline says of it). */
export function recoverGoesTo(update: CoderStateUpdate): Next<typeof NODE.recover> {
  if (update.status !== undefined && update.status !== "running") return END;
  if (update.replanReason !== undefined) return NODE.plan;
  return NODE.act;
}
