/**
 * The coder graph for LangGraph Studio / the LangGraph server, compiled without a checkpointer:
 * the server brings its own.
 */
import { createCoderGraph } from "../src/agent/graph.js";

export const coder = createCoderGraph().compile();
coder.name = "coder";
