/** The intent classifier alone, for debugging it in LangGraph Studio. */
import { z } from "zod";
import { ContextSchema } from "../src/coder/context.js";
import { createIntentGraph } from "../src/coder/intent-graph.js";
import { servedGraph } from "./served.js";
import { MESSAGES_INPUT, withSettingsForm } from "./settings-form.js";

const compiled = createIntentGraph().compile();
compiled.name = "intent";

export const intent = servedGraph(
  withSettingsForm(compiled, {
    input: MESSAGES_INPUT,
    state: MESSAGES_INPUT.extend({
      intent: z
        .object({ intent: z.string(), confidence: z.number(), source: z.string() })
        .describe("The decided intent"),
    }),
  }),
  ContextSchema,
);
