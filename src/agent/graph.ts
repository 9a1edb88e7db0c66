/** The coder graph's wiring, and nothing else. Nodes live in ./nodes, routers in ./routing. */
import { END, START, StateGraph } from "@langchain/langgraph";
import { ContextSchema } from "./context.js";
import { createActNode } from "./nodes/act/index.js";
import { createIntentClassifyNode } from "./nodes/intent-classify/index.js";
import { createPlanNode } from "./nodes/plan/index.js";
import { createRecoverNode } from "./nodes/recover.js";
import { createToolExecuteNode } from "./nodes/tool-execute.js";
import {
  NODE,
  routeAfterAct,
  routeAfterIntent,
  routeAfterRecover,
  routeAfterToolExecute,
} from "./routing.js";
import { resolveDeps, type GraphDeps } from "./runtime.js";
import { CoderState } from "./state.js";

/**
 * Builds the uncompiled coder graph: intent-classify → plan → act ⇄ tool-execute, with recover on
 * every failure edge. Compile it with a checkpointer (CLI, tests) or without (LangGraph server).
 */
export function createCoderGraph(options: GraphDeps = {}) {
  const deps = resolveDeps(options);
  return new StateGraph(CoderState, ContextSchema)
    .addNode(NODE.intentClassify, createIntentClassifyNode(deps))
    .addNode(NODE.plan, createPlanNode(deps))
    .addNode(NODE.act, createActNode(deps))
    .addNode(NODE.toolExecute, createToolExecuteNode(deps))
    .addNode(NODE.recover, createRecoverNode())
    .addEdge(START, NODE.intentClassify)
    .addConditionalEdges(NODE.intentClassify, routeAfterIntent, {
      [NODE.plan]: NODE.plan,
      [NODE.act]: NODE.act,
    })
    .addEdge(NODE.plan, NODE.act)
    .addConditionalEdges(NODE.act, routeAfterAct, {
      [NODE.toolExecute]: NODE.toolExecute,
      [NODE.recover]: NODE.recover,
      [END]: END,
    })
    .addConditionalEdges(NODE.toolExecute, routeAfterToolExecute, {
      [NODE.toolExecute]: NODE.toolExecute,
      [NODE.act]: NODE.act,
      [NODE.recover]: NODE.recover,
    })
    .addConditionalEdges(NODE.recover, routeAfterRecover, {
      [NODE.act]: NODE.act,
      [NODE.plan]: NODE.plan,
      [END]: END,
    });
}
