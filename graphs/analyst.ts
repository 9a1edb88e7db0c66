/**
 * The analyst graph for LangGraph Studio / the LangGraph server, compiled without a checkpointer
 * or store: the server brings both.
 */
import { z } from "zod";
import { AnalystContextSchema } from "../src/analyst/context.js";
import { createAnalystGraph } from "../src/analyst/graph.js";
import { servedGraph } from "./served.js";
import { withSettingsForm } from "./settings-form.js";

const compiled = createAnalystGraph().compile();
compiled.name = "analyst";

export const analyst = servedGraph(
  withSettingsForm(compiled, {
    input: z.object({}).describe("No input: the folder comes from the run settings (target)"),
    state: z.object({
      total: z.number().describe("Units to analyse"),
      cursor: z.number().describe("Units done"),
      reportPath: z.string().optional().describe("Where the Markdown report was written"),
      summary: z.string().describe("One-line outcome"),
    }),
  }),
  AnalystContextSchema,
);
