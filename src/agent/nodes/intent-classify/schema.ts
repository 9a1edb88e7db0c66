import { z } from "zod";

/** What the model must return when the rules are unsure. */
export const IntentAnswer = z.object({
  intent: z.enum(["build", "modify", "analyze", "run", "chat"]).describe("The kind of request"),
});
