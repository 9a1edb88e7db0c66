/**
 * Calibration profiles: what `keel calibrate` measured of one model on one server, and the settings
 * that won, kept in keel's own state folder (`<stateDir>/profiles/<server>/<model>.json`, never in
 * a workspace). A profile holds only the settings calibration chooses (`PROFILE_KEYS`), each
 * checked on reading as the settings table checks it; a file that does not parse is ignored and
 * named, never half used. It is for the model and server it was measured on: a later run uses it
 * only while the server's kind and version and the model's name and digest are the same.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { CALL_KINDS } from "../models/budget.js";
import { THINK_SETTINGS, TOOL_MODES } from "../models/capabilities.js";
import type { ServerIdentity } from "../models/identity.js";
import { PROVIDERS, type Provider } from "../models/provider.js";
import { FORMAT_NAMES } from "../models/tool-calls/types.js";

/** The settings a profile may give: the choices calibration measures, nothing else. */
export const ProfileSettingsSchema = z
  .object({
    toolMode: z.enum(TOOL_MODES),
    toolFormat: z.enum(FORMAT_NAMES),
    contextWindow: z.number().int().min(1024),
    generationBudget: z
      .object(
        Object.fromEntries(CALL_KINDS.map((k) => [k, z.number().int().min(16)])) as Record<
          (typeof CALL_KINDS)[number],
          z.ZodNumber
        >,
      )
      .partial()
      .strict(),
    think: z.enum(THINK_SETTINGS),
    thinkCut: z.number().int().min(0),
    concurrency: z.number().int().min(1).max(16),
  })
  .partial()
  .strict();
export type ProfileSettings = z.output<typeof ProfileSettingsSchema>;
/** The one list of the settings a profile may give. */
export const PROFILE_KEYS = Object.keys(ProfileSettingsSchema.shape) as Array<
  keyof ProfileSettings
>;

/** One configuration tried, and what the tasks made of it. */
export const TrialSchema = z.object({
  /** What was varied: channel, context, thinking, budget (or a server measurement). */
  dimension: z.string(),
  /** The candidate, for people: "native", "prompt (hermes)", "think cut at 512"… */
  label: z.string(),
  settings: ProfileSettingsSchema,
  /** Tasks whose attempts all passed, of the tasks run. */
  passK: z.number().int().min(0),
  tasks: z.number().int().min(0),
  passes: z.number().int().min(0),
  attempts: z.number().int().min(0),
  /** Share of the tool calls that were well formed. */
  wellFormed: z.number().min(0).max(1),
  /** Mean seconds per attempt. */
  seconds: z.number().min(0),
  /** Why it was stopped before its last attempt (clearly behind), if it was. */
  stopped: z.string().optional(),
});
export type Trial = z.output<typeof TrialSchema>;

export const ProfileSchema = z.object({
  version: z.literal(1),
  /** When it was measured (ISO). */
  at: z.string(),
  provider: z.enum(PROVIDERS),
  /** The server's URL as the runs reach it. */
  url: z.string(),
  identity: z.object({
    server: z.string(),
    version: z.string(),
    model: z.string(),
    digest: z.string(),
    quantization: z.string().optional(),
  }),
  /** The model name calibrate was given. */
  requested: z.string(),
  mode: z.enum(["quick", "full"]),
  k: z.number().int().min(1),
  tasks: z.array(z.string()),
  /** The settings that won. */
  settings: ProfileSettingsSchema,
  trials: z.array(TrialSchema),
  /** Per dimension: what won, and why. */
  decisions: z.array(z.object({ dimension: z.string(), winner: z.string(), why: z.string() })),
  /** What the server showed of itself (the window it holds, slots, requests at once…). */
  facts: z.record(z.string(), z.string()),
  /** How long calibration took. */
  seconds: z.number().min(0),
});
export type Profile = z.output<typeof ProfileSchema>;

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 12);
const slug = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);

/** The folder of one server's profiles: by provider and URL. */
export const serverFolder = (stateDir: string, provider: Provider, url: string) =>
  path.join(stateDir, "profiles", `${provider}-${hash(url.replace(/\/+$/, ""))}`);

/** The file of a model's profile on a server. */
export const profileFile = (stateDir: string, provider: Provider, url: string, model: string) =>
  path.join(serverFolder(stateDir, provider, url), `${slug(model)}-${hash(model)}.json`);

/** Writes a profile (whole, then renamed into place); returns its file. */
export function writeProfile(stateDir: string, profile: Profile): string {
  const file = profileFile(stateDir, profile.provider, profile.url, profile.identity.model);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(ProfileSchema.parse(profile), null, 2)}\n`, {
    mode: 0o600,
  });
  renameSync(tmp, file);
  return file;
}

/** A server's profiles, and the files that could not be read (with why). */
export interface ServerProfiles {
  profiles: Array<{ file: string; profile: Profile }>;
  unreadable: Array<{ file: string; why: string }>;
}

/** The profiles kept for a server; none when there is no folder for it. */
export function readProfiles(stateDir: string, provider: Provider, url: string): ServerProfiles {
  const dir = serverFolder(stateDir, provider, url);
  const out: ServerProfiles = { profiles: [], unreadable: [] };
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return out;
  }
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    try {
      const parsed = ProfileSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
      if (parsed.success) out.profiles.push({ file, profile: parsed.data });
      else out.unreadable.push({ file, why: parsed.error.issues[0]?.message ?? "not a profile" });
    } catch (e) {
      out.unreadable.push({ file, why: (e as Error).message });
    }
  }
  return out;
}

/** Whether a profile holds for the server and model as they are now. */
export type ProfileMatch =
  | { status: "applied"; file: string; profile: Profile }
  | { status: "stale"; file: string; profile: Profile; why: string }
  | { status: "none"; why: string };

/**
 * The profile of `now`'s model, if one was measured on this server: applied while the server's
 * kind and version and the model's digest are those it was measured with, stale otherwise (with
 * what changed). Never a profile of another model.
 */
export function matchProfile(found: ServerProfiles, now: ServerIdentity): ProfileMatch {
  const mine = found.profiles.find(
    (p) => p.profile.identity.model === now.model && p.profile.identity.server === now.server,
  );
  if (!mine)
    return {
      status: "none",
      why: `no calibration of ${now.model} on this server (keel calibrate -m ${now.model} makes one)`,
    };
  const was = mine.profile.identity;
  const changed = [
    was.digest !== now.digest
      ? `the model's digest changed (${short(was.digest)} then, ${short(now.digest)} now)`
      : "",
    was.version !== now.version
      ? `the server's version changed (${was.version || "unknown"} then, ${now.version || "unknown"} now)`
      : "",
  ].filter(Boolean);
  if (changed.length)
    return {
      status: "stale",
      file: mine.file,
      profile: mine.profile,
      why: `${changed.join("; ")}: keel's defaults until keel calibrate measures it again`,
    };
  return { status: "applied", file: mine.file, profile: mine.profile };
}

const short = (digest: string) => (digest ? digest.replace(/^sha256:/, "").slice(0, 12) : "none");
