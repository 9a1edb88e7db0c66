import { z } from "zod";

export const PlanAnswer = z.object({
  steps: z.array(z.string().min(1)).min(1).max(8).describe("Short concrete steps, in order"),
});
