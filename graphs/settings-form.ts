/**
 * langgraph-api 2.0.0 derives no settings form from graphs whose state is a `StateSchema` (its
 * schema endpoint hard-codes "StateSchema doesn't have config schema support yet"), so Studio
 * would show no run settings. This view of a compiled graph shows the server plain zod schemas
 * instead, so it reads the context schema (with each field's help text) through its zod path.
 * Only the server's schema reader sees the view: every method runs on the real graph.
 */
import { z } from "zod";

export function withSettingsForm<G extends object>(
  graph: G,
  schemas: { state: z.ZodType; input: z.ZodType },
): G {
  const builder = (graph as { builder?: object }).builder;
  if (!builder) return graph;
  const view = new Proxy(builder, {
    get(target, prop) {
      if (prop === "_schemaRuntimeDefinition" || prop === "_outputRuntimeDefinition")
        return schemas.state;
      if (prop === "_inputRuntimeDefinition") return schemas.input;
      return Reflect.get(target, prop, target) as unknown;
    },
  });
  return new Proxy(graph, {
    get(target, prop) {
      if (prop === "builder") return view;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function"
        ? (value as (...a: unknown[]) => unknown).bind(target)
        : value;
    },
  });
}

/** Studio's chat input: a list of messages. */
export const MESSAGES_INPUT = z.object({
  messages: z
    .array(z.object({ role: z.string().describe("user, assistant or tool"), content: z.string() }))
    .describe("The conversation; the last user message is the request"),
});
