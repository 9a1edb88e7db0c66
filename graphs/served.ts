/**
 * A graph as the LangGraph server runs it for an API caller. A run's settings arrive in its
 * `context` (or, from older clients, `configurable`) from whoever can reach the server, so they are
 * an untrusted source's: the settings table (`trust`, src/run/setting-meta.ts) decides per entry
 * what an API caller may set, and everything else — the sandbox, approval, grants, where prompts
 * and keys go, the guards' limits — comes only from the serving process's own settings (its
 * environment and its user's settings file). Each run's config is rewritten that way before the
 * graph sees it; a setting the caller may not set ends the run with an error that names it.
 */
import type { z } from "zod";
import { callerContext } from "../src/run/settings.js";

/** The methods through which a caller's config reaches the nodes (the server calls streamEvents). */
const RUNS = new Set<PropertyKey>(["invoke", "stream", "streamEvents"]);

interface RunConfig {
  context?: unknown;
  configurable?: Record<string, unknown>;
}

/** `graph` with every run's settings taken as an API caller's (`callerConfig`). */
export function servedGraph<G extends object>(graph: G, schema: z.ZodObject): G {
  return new Proxy(graph, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (!RUNS.has(prop) || typeof value !== "function") return value;
      const run = value as (input: unknown, config?: RunConfig, ...rest: unknown[]) => unknown;
      return (input: unknown, config?: RunConfig, ...rest: unknown[]) =>
        run.call(target, input, callerConfig(schema, config), ...rest);
    },
  });
}

/**
 * `config` with its run settings (the schema's keys of `configurable`, under `context`) replaced by
 * a context made from them as an API caller's (`callerContext`); the rest of `configurable` (the
 * thread, the checkpoint) is kept. Throws `SettingsFileError` naming what the caller may not set.
 */
export function callerConfig(schema: z.ZodObject, config: RunConfig = {}): RunConfig {
  const keys = new Set(Object.keys(schema.shape));
  const configurable = config.configurable ?? {};
  const context =
    typeof config.context === "object" && config.context !== null ? config.context : {};
  const given = Object.fromEntries(Object.entries(configurable).filter(([k]) => keys.has(k)));
  return {
    ...config,
    configurable: Object.fromEntries(Object.entries(configurable).filter(([k]) => !keys.has(k))),
    context: callerContext(schema, { ...given, ...context }),
  };
}
