/** The intent classifier alone, for debugging it in LangGraph Studio. */
import { createIntentGraph } from "../src/agent/intent-graph.js";

export const intent = createIntentGraph().compile();
intent.name = "intent";
