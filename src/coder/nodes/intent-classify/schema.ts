import { z } from "zod";
import { INTENTS } from "../../../tools/registry.js";

/** What the model must return when the rules are unsure. */
export const IntentAnswer = z.object({
  intent: z.enum(INTENTS).describe("The kind of request"),
});
