/**
 * The intent classifier alone, as a one-node graph, so Studio can debug it in isolation: send a
 * request, see the intent, its confidence and whether the rules or the model decided.
 */
import { END, START, StateGraph } from "@langchain/langgraph";
import { ContextSchema } from "./context.js";
import { createIntentClassifyNode } from "./nodes/intent-classify/index.js";
import { NODE } from "./routing.js";
import type { GraphDeps } from "../run/model.js";
import { CoderState } from "./state.js";

export function createIntentGraph(deps: GraphDeps = {}) {
  return new StateGraph(CoderState, ContextSchema)
    .addNode(NODE.intentClassify, createIntentClassifyNode(deps))
    .addEdge(START, NODE.intentClassify)
    .addEdge(NODE.intentClassify, END);
}
