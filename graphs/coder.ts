/**
 * The coder graph for LangGraph Studio / the LangGraph server, compiled without a checkpointer:
 * the server brings its own.
 */
import { z } from "zod";
import { ContextSchema } from "../src/coder/context.js";
import { createCoderGraph } from "../src/coder/graph.js";
import { RUN_STATUSES } from "../src/coder/state.js";
import { servedGraph } from "./served.js";
import { MESSAGES_INPUT, withSettingsForm } from "./settings-form.js";

const compiled = createCoderGraph().compile();
compiled.name = "coder";

export const coder = servedGraph(
  withSettingsForm(compiled, {
    input: MESSAGES_INPUT,
    state: MESSAGES_INPUT.extend({
      status: z.enum(RUN_STATUSES).describe("Outcome of the run"),
      summary: z.string().describe("Final answer or report"),
      filesWritten: z.array(z.string()).describe("Files written this run"),
    }),
  }),
  ContextSchema,
);
