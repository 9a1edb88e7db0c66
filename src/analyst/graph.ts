/** The analyst graph's wiring: enumerate → analyze-units ⟲ → summarize-folders ⟲ → write-report. */
import { END, START, StateGraph } from "@langchain/langgraph";
import { resolveDeps, type GraphDeps } from "../run/model.js";
import { AnalystContextSchema } from "./context.js";
import { createAnalyzeUnitsNode } from "./nodes/analyze-units.js";
import { createEnumerateNode } from "./nodes/enumerate.js";
import { createSummarizeFoldersNode } from "./nodes/summarize-folders.js";
import { createWriteReportNode } from "./nodes/write-report.js";
import { ANALYST_NODE, routeAfterFolders, routeAfterUnits } from "./routing.js";
import { AnalystState } from "./state.js";

export interface AnalystGraphOptions extends GraphDeps {
  /** Builds the units step instead of the in-process one (the distributed run: a queue between). */
  unitsNode?: (deps: GraphDeps) => ReturnType<typeof createAnalyzeUnitsNode>;
}

/**
 * Builds the uncompiled analyst graph. Compile it with a checkpointer and a store (CLI, tests), or
 * without either for the LangGraph server, which brings its own.
 */
export function createAnalystGraph({ unitsNode, ...options }: AnalystGraphOptions = {}) {
  const deps = resolveDeps(options);
  return new StateGraph(AnalystState, AnalystContextSchema)
    .addNode(ANALYST_NODE.enumerate, createEnumerateNode(deps))
    .addNode(ANALYST_NODE.units, (unitsNode ?? createAnalyzeUnitsNode)(deps))
    .addNode(ANALYST_NODE.folders, createSummarizeFoldersNode(deps))
    .addNode(ANALYST_NODE.report, createWriteReportNode(deps))
    .addEdge(START, ANALYST_NODE.enumerate)
    .addConditionalEdges(ANALYST_NODE.enumerate, routeAfterUnits, {
      [ANALYST_NODE.units]: ANALYST_NODE.units,
      [ANALYST_NODE.folders]: ANALYST_NODE.folders,
    })
    .addConditionalEdges(ANALYST_NODE.units, routeAfterUnits, {
      [ANALYST_NODE.units]: ANALYST_NODE.units,
      [ANALYST_NODE.folders]: ANALYST_NODE.folders,
    })
    .addConditionalEdges(ANALYST_NODE.folders, routeAfterFolders, {
      [ANALYST_NODE.folders]: ANALYST_NODE.folders,
      [ANALYST_NODE.report]: ANALYST_NODE.report,
    })
    .addEdge(ANALYST_NODE.report, END);
}
