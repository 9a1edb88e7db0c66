/**
 * The calibration profile of a run: one more source of settings, beneath flags, the environment
 * and the settings files (`layered`'s lowest layer, run/layered.ts), taken from keel's state folder for the model and
 * server the run reaches — only when they are the ones it was measured on (run/profiles.ts). Every
 * run says which profile applied and why (`ProfileUse`): `keel run --json`'s settings, the
 * timeline, `keel models`, `keel doctor`.
 */
import type { z } from "zod";
import { readEnv } from "../env.js";
import { identifyServer } from "../models/identity.js";
import { withReplyDeadline } from "../models/probe.js";
import { layered } from "./layered.js";
import { ModelSettingsSchema, parseSettings } from "./settings.js";
import {
  matchProfile,
  PROFILE_KEYS,
  readProfiles,
  type ProfileSettings,
  type ServerProfiles,
} from "./profiles.js";

/** Which profile a run used, and why (or why none). */
export interface ProfileUse {
  /**
   * applied: its settings are in force where nothing above it set them; stale: measured on another
   * version of the model or server, not used; none: no profile of this model on this server;
   * unchecked: the server did not say which model it serves, so none is used; off: not looked for.
   */
  status: "applied" | "stale" | "none" | "unchecked" | "off";
  why: string;
  /** The profile's file (applied or stale). */
  file?: string;
  /** When it was measured. */
  at?: string;
  /** The settings taken from it. */
  applied?: string[];
  /** Its settings a flag, environment variable or settings file set instead. */
  overridden?: string[];
  /** The tool channel it chose, if it chose one (what `keel models` shows). */
  toolMode?: "native" | "prompt";
}

/** Most ms keel waits for the server to say which model it serves before a run. */
const IDENTIFY_MS = 5_000;

/** The settings a profile gives a run with `schema`, and what the sources above it already set. */
export function profileLayer(
  settings: ProfileSettings,
  schema: z.ZodObject,
  explicit: Record<string, unknown>,
): { beneath: Record<string, unknown>; applied: string[]; overridden: string[] } {
  const beneath: Record<string, unknown> = {};
  const applied: string[] = [];
  const overridden: string[] = [];
  for (const key of PROFILE_KEYS) {
    const value = settings[key];
    if (value === undefined || !(key in schema.shape)) continue;
    beneath[key] = value;
    if (explicit[key] === undefined) applied.push(key);
    else if (typeof value === "object") {
      // an object merges under what the sources above give of it: the kinds they leave
      const above = explicit[key] as Record<string, unknown>;
      const kinds = Object.keys(value).filter((k) => above[k] === undefined);
      if (kinds.length) applied.push(`${key} (${kinds.join(", ")})`);
      if (kinds.length < Object.keys(value).length) overridden.push(key);
    } else overridden.push(key);
  }
  return { beneath, applied, overridden };
}

/**
 * The profile layer of a run with `schema` and `given` settings: found by the server and the
 * model the server says it serves. Reads the state folder first and asks the server only when a
 * profile of that server exists. Never throws for a server that cannot be asked: the run then
 * uses keel's defaults, and its own first request meets the server's error.
 */
export async function profileOf(
  schema: z.ZodObject,
  given: Record<string, unknown>,
  opts: { stateDir?: string; fetchImpl?: typeof fetch } = {},
): Promise<{ beneath: Record<string, unknown>; use: ProfileUse }> {
  const s = parseSettings(ModelSettingsSchema, { context: { ...given } });
  if (s.model === "none") return { beneath: {}, use: { status: "off", why: "no model" } };
  const found: ServerProfiles = readProfiles(
    opts.stateDir ?? readEnv().stateDir,
    s.provider,
    s.serverUrl,
  );
  if (found.profiles.length === 0)
    return {
      beneath: {},
      use: {
        status: "none",
        why: `no calibration for this server (keel calibrate -m ${s.model} makes one)${found.unreadable.length ? `; unreadable: ${found.unreadable.map((u) => `${u.file} (${u.why})`).join(", ")}` : ""}`,
      },
    };
  let identity;
  try {
    identity = await identifyServer(
      withReplyDeadline(opts.fetchImpl ?? fetch, IDENTIFY_MS),
      s.provider,
      s.serverUrl,
      s.model,
      s.apiKey,
    );
  } catch (e) {
    return {
      beneath: {},
      use: {
        status: "unchecked",
        why: `the server did not say which model it serves (${(e as Error).message.slice(0, 120)}); keel's defaults`,
      },
    };
  }
  const match = matchProfile(found, identity);
  if (match.status === "none") return { beneath: {}, use: match };
  if (match.status === "stale")
    return {
      beneath: {},
      use: { status: "stale", why: match.why, file: match.file, at: match.profile.at },
    };
  const layer = profileLayer(match.profile.settings, schema, layered(schema, given));
  return {
    beneath: layer.beneath,
    use: {
      status: "applied",
      why: `calibrated ${match.profile.at.slice(0, 10)} on this server for ${identity.model}${identity.digest ? ` (${identity.digest.replace(/^sha256:/, "").slice(0, 12)})` : ""}`,
      file: match.file,
      at: match.profile.at,
      applied: layer.applied,
      overridden: layer.overridden,
      ...(match.profile.settings.toolMode ? { toolMode: match.profile.settings.toolMode } : {}),
    },
  };
}

/** One line for the timeline: which profile the run uses, or why it uses none. */
export function describeProfileUse(use: ProfileUse): string {
  switch (use.status) {
    case "applied":
      return `calibration: ${use.why}; from it: ${use.applied?.join(", ") || "nothing (set above it)"}${use.overridden?.length ? `; set above it: ${use.overridden.join(", ")}` : ""}`;
    case "stale":
      return `calibration: not used, ${use.why}`;
    default:
      return `calibration: ${use.why}`;
  }
}
