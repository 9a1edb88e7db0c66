/**
 * The analyst graph for LangGraph Studio / the LangGraph server, compiled without a checkpointer
 * or store: the server brings both.
 */
import { createAnalystGraph } from "../src/analysis/graph.js";

export const analyst = createAnalystGraph().compile();
analyst.name = "analyst";
