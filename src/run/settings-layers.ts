/**
 * A run's settings as layers, folded once: each layer holds the values one source gave (the
 * person's file, a project's file, the environment, the run's own from flags, code or an API
 * caller), lowest first, and the settings table (`trust`, setting-meta.ts) says per entry what a
 * value from a source keel does not take at its word does. Pure: reading the layers is the
 * caller's (settings.ts).
 */
import { isDeepStrictEqual } from "node:util";
import type { z } from "zod";
import { defaultOf, takeOf, type SettingSource } from "./setting-meta.js";

/** The values one source gave a run, and how a notice or an error names it. */
export interface SettingsLayer {
  source: SettingSource;
  /** e.g. `settings file /w/.keel/settings.json`, `environment`, `the run's context (an API caller)`. */
  name: string;
  values: Record<string, unknown>;
  /**
   * Its objects merge beneath what a later layer gives of them, key by key, instead of being
   * replaced whole (the model's calibration profile: its `generationBudget.plan` stays under a
   * settings file's `{ act: 2048 }`).
   */
  mergesBeneath?: boolean;
}

/** A value a layer gave that its source may not set, with why. */
export interface Refusal {
  layer: SettingsLayer;
  key: string;
  why: string;
}

/** What each kind of untrusted source is told when a value of the person's alone is refused. */
const PERSON_ONLY: Record<Exclude<SettingSource, "person">, string> = {
  project:
    "only you may set it (a flag, the environment or your user settings file): a project's file must not choose where your prompts, keys or trust go, nor loosen a guard",
  api: "only the person serving keel may set it (their flags, environment or user settings file): an API caller must not choose where their prompts, keys or trust go, nor loosen a guard",
};

/**
 * `layers` (lowest first) folded into one run's values, before the schema's defaults, and what
 * was refused. A person's layer sets what it gives. An untrusted layer's value, by its entry:
 * `set` like a person's; `lower` only when it is a number at most the person's own (their layers
 * over the default); `add` to the list, after every layer (a later person's list does not drop
 * it); `refuse` — unless it is what the person's own layers give anyway (it changes nothing).
 */
export function foldLayers(
  schema: z.ZodObject,
  layers: readonly SettingsLayer[],
): { values: Record<string, unknown>; refused: Refusal[] } {
  const mine: Record<string, unknown> = {};
  for (const l of layers)
    if (l.source === "person")
      for (const [key, value] of Object.entries(l.values))
        if (value !== undefined) mine[key] = value;
  mergeBeneath(mine, layers);
  const own = (key: string) => (key in mine ? mine[key] : defaultOf(schema, key));
  const values: Record<string, unknown> = {};
  const added: Record<string, unknown[]> = {};
  const refused: Refusal[] = [];
  for (const layer of layers)
    for (const [key, value] of Object.entries(layer.values)) {
      if (value === undefined) continue;
      if (layer.source === "person") {
        values[key] = value;
        continue;
      }
      if (!(key in schema.shape)) continue; // not a setting of this run: nothing to take or refuse
      const take = takeOf(schema, key, layer.source);
      const base = own(key);
      // a value of the wrong type is set, for the schema's own error that names what it takes
      const wrongType =
        (take === "lower" && typeof value !== "number") ||
        (take === "add" && !Array.isArray(value));
      if (take === "set" || wrongType || (take === "lower" && isAtMost(value, base)))
        values[key] = value;
      else if (take === "add") (added[key] ??= []).push(...(value as unknown[]));
      else if (!isDeepStrictEqual(value, base))
        refused.push({
          layer,
          key,
          why:
            take === "lower"
              ? `it may only lower it (yours: ${JSON.stringify(base)}); raising a budget is yours to do`
              : PERSON_ONLY[layer.source],
        });
    }
  for (const [key, more] of Object.entries(added)) {
    const list = Array.isArray(values[key]) ? (values[key] as unknown[]) : [];
    values[key] = [...list, ...more];
  }
  mergeBeneath(values, layers);
  return { values, refused };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Merges the objects of the layers that merge beneath (`mergesBeneath`) under `values`' own. */
function mergeBeneath(values: Record<string, unknown>, layers: readonly SettingsLayer[]): void {
  for (const l of layers)
    if (l.mergesBeneath)
      for (const [key, low] of Object.entries(l.values))
        if (isRecord(low) && isRecord(values[key])) values[key] = { ...low, ...values[key] };
}

const isAtMost = (value: unknown, base: unknown) =>
  typeof value === "number" && typeof base === "number" && value <= base;
