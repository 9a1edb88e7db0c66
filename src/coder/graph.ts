/** The coder graph's wiring, and nothing else. Nodes live in ./nodes, routers in ./routing. */
import { START, StateGraph } from "@langchain/langgraph";
import { ContextSchema } from "./context.js";
import { createActNode } from "./nodes/act/index.js";
import { createIntentClassifyNode } from "./nodes/intent-classify/index.js";
import { createPlanNode } from "./nodes/plan/index.js";
import { createRecoverNode } from "./nodes/recover.js";
import { createToolExecuteNode } from "./nodes/tool-execute.js";
import {
  NEXT,
  NODE,
  routeAfterAct,
  routeAfterIntent,
  routeAfterRecover,
  routeAfterToolExecute,
  routed,
  withIds,
} from "./routing.js";
import { resolveDeps, type GraphDeps } from "../run/model.js";
import { CoderState } from "./state.js";

/**
 * Builds the uncompiled coder graph: intent-classify → plan → act ⇄ tool-execute, with recover on
 * every failure edge. Each node with a choice names its next node through its router (`routed`),
 * from what it decided; `ends` declares the choices (`NEXT`), so the drawn graph has every edge.
 * Compile it with a checkpointer (CLI, tests) or without (LangGraph server).
 */
export function createCoderGraph(options: GraphDeps = {}) {
  const deps = resolveDeps(options);
  return new StateGraph(CoderState, ContextSchema)
    .addNode(NODE.intentClassify, routed(createIntentClassifyNode(deps), routeAfterIntent), {
      ends: [...NEXT[NODE.intentClassify]],
    })
    .addNode(NODE.plan, withIds(createPlanNode(deps)))
    .addNode(NODE.act, routed(createActNode(deps), routeAfterAct), {
      ends: [...NEXT[NODE.act]],
    })
    .addNode(NODE.toolExecute, routed(createToolExecuteNode(deps), routeAfterToolExecute), {
      ends: [...NEXT[NODE.toolExecute]],
    })
    .addNode(NODE.recover, routed(createRecoverNode(), routeAfterRecover), {
      ends: [...NEXT[NODE.recover]],
    })
    .addEdge(START, NODE.intentClassify)
    .addEdge(NODE.plan, NODE.act);
}
