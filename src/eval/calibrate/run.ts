/**
 * `keel calibrate`: a bounded search over the choices that matter for one model on one server,
 * each scored with keel eval's tasks (pass^k, well-formed calls, time per attempt), and the winner
 * kept as the model's profile in keel's state folder (run/profiles.ts), which every later run uses
 * beneath its flags, environment and settings files.
 *
 * The server is measured first, with the canary (its window, the model's recall, requests at
 * once); then each choice in turn — thinking, tool channel, window, the act budget — with what
 * won before it held, keel's default first. A candidate races the leader: it stops as soon as it
 * could pass no more attempts than the leader even if all it has left passed.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { settingsFrom, type SettingsInput } from "../../coder/context.js";
import { readEnv } from "../../env.js";
import { chooseToolMode, windowFor, type ModelProfile } from "../../models/capabilities.js";
import type { CanaryServer } from "../../models/canary.js";
import { identifyServer, type ServerIdentity } from "../../models/identity.js";
import { createCapabilityProbe, withReplyDeadline } from "../../models/probe.js";
import { retryPolicy } from "../../run/model.js";
import {
  PROFILE_KEYS,
  writeProfile,
  type Profile,
  type ProfileSettings,
} from "../../run/profiles.js";
import { EvalServerError } from "../run.js";
import { EVAL_TASKS, type EvalTask } from "../tasks.js";
import { measureConcurrency, measureHeld, measureRecall } from "./measure.js";
import { settle, type Search } from "./race.js";
import {
  budgetCandidates,
  channelCandidates,
  contextCandidates,
  thinkingCandidates,
  type SearchMode,
} from "./search.js";

/** The tasks of `--quick`: a file made, a file fixed in place, a long file read. */
export const QUICK_TASKS = ["create-greet", "edit-subtract", "analyse-long"];

export interface CalibrateOptions {
  /** The run settings calibration starts from (flags; the environment and settings files add theirs). */
  settings: Omit<SettingsInput, "workspace">;
  mode: SearchMode;
  k: number;
  /** The tasks (default: `QUICK_TASKS` for quick, all of keel eval's for full). */
  tasks?: readonly EvalTask[];
  stateDir?: string;
  /** One line per step: what is tried, how it did, what leads. */
  progress?: (line: string) => void;
}

/** Measures the model on its server and writes its profile; returns it and its file. */
export async function calibrate(o: CalibrateOptions): Promise<{ profile: Profile; file: string }> {
  const started = Date.now();
  const say = o.progress ?? (() => undefined);
  const s = settingsFrom({ context: { ...o.settings } });
  const policy = retryPolicy({ ...s, retries: 1 });
  const identity = await identifyServer(
    withReplyDeadline(fetch, 10_000),
    s.provider,
    s.serverUrl,
    s.model,
    s.apiKey,
  ).catch((e: unknown) => {
    throw new EvalServerError(
      `could not ask ${s.serverUrl} which model it serves: ${(e as Error).message}`,
    );
  });
  const model = await createCapabilityProbe()(s.serverUrl, s.model, policy);
  const window = windowFor(s.contextWindow, model);
  const tasks =
    o.tasks ??
    (o.mode === "quick" ? EVAL_TASKS.filter((t) => QUICK_TASKS.includes(t.id)) : EVAL_TASKS);
  say(
    `keel calibrate ${identity.model} on ${identity.server} ${identity.version || "(version unknown)"}: ${o.mode}, ${tasks.length} tasks × k=${o.k}`,
  );
  const server: CanaryServer = {
    provider: s.provider,
    url: s.serverUrl,
    model: s.model,
    ...(s.apiKey ? { apiKey: s.apiKey } : {}),
  };
  const facts = await measureServer(server, window, o.mode, say);
  const dir = await mkdtemp(path.join(tmpdir(), "keel-calibrate-"));
  const search: Search = {
    settings: o.settings,
    model: s.model,
    mode: o.mode,
    k: o.k,
    tasks,
    checkpoints: `sqlite:${path.join(dir, "runs.db")}`,
    thinks: model.capabilities.includes("thinking"),
    defaultMode: chooseToolMode(model, "auto"),
    chosen: {},
    trials: [],
    decisions: [],
    attempts: 0,
    say,
  };
  try {
    // thinking first: a model that thinks away its budget fails whatever the other choices are
    await settle(search, thinkingCandidates(model, s.provider === "ollama", o.mode));
    await settle(search, channelCandidates(model));
    await settle(search, contextCandidates(window, facts.recalled));
    // --quick bounds every reply itself (race.ts): the act budget is --full's to measure
    if (o.mode === "full") await settle(search, budgetCandidates(s.generationBudget.act, o.mode));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const settings: ProfileSettings = {
    ...search.chosen,
    ...(facts.concurrency ? { concurrency: facts.concurrency } : {}),
  };
  const profile = profileOf(o, s, identity, model, {
    settings,
    trials: search.trials,
    decisions: search.decisions,
    facts: { ...facts.lines, ...(search.ended ? { search: `ended early: ${search.ended}` } : {}) },
    tasks: tasks.map((t) => t.id),
    seconds: (Date.now() - started) / 1000,
  });
  const file = writeProfile(o.stateDir ?? readEnv().stateDir, profile);
  say(`profile written: ${file} (${profile.seconds.toFixed(0)} s, ${search.attempts} attempts)`);
  return { profile, file };
}

/** The server measured with the canary: its window, the model's recall, requests at once. */
async function measureServer(
  server: CanaryServer,
  window: number,
  mode: SearchMode,
  say: (line: string) => void,
): Promise<{ lines: Record<string, string>; recalled?: number; concurrency?: number }> {
  const lines: Record<string, string> = {};
  const held = await measureHeld(server, window);
  lines.window = held.ok
    ? `held ${window}: the server counted ${held.counted ?? "?"} tokens of a prompt keel estimated at ${held.estimated}`
    : held.answered
      ? `not held at ${window}: ${held.error ?? "?"}`
      : `not measured at ${window}: the server did not answer (${held.error ?? "?"})`;
  say(`server   ${lines.window}`);
  const recall = await measureRecall(
    server,
    held.serverWindow ?? window,
    mode,
    (w, ok) =>
      say(`canary   window ${w}: the model ${ok ? "repeated" : "did not repeat"} the marker`),
    held,
  );
  lines.recall =
    recall.window !== undefined
      ? `the model repeats the marker at ${recall.window} (tried ${recall.tried.map((t) => t.window).join(", ")})`
      : `the model did not repeat the marker at any window tried (${recall.tried.map((t) => t.window).join(", ")}): its recall is not measured, the window stays keel's`;
  const conc = await measureConcurrency(
    server,
    held.serverWindow ?? window,
    mode,
    held.tokensPerSecond,
  );
  lines.concurrency = conc.tried
    .map(
      (t) =>
        `${t.requests} at once: ${t.ok ? `${Math.round(t.tokensPerSecond)} tokens/s` : `failed (${t.error})`}`,
    )
    .join("; ");
  lines.concurrency += ` → ${conc.chosen}`;
  say(`server   requests at once: ${lines.concurrency}`);
  const serverWindow = held.serverWindow;
  return {
    lines,
    ...(recall.window !== undefined
      ? { recalled: Math.min(recall.window, serverWindow ?? Infinity) }
      : serverWindow !== undefined
        ? { recalled: serverWindow }
        : {}),
    concurrency: conc.chosen,
  };
}

function profileOf(
  o: CalibrateOptions,
  s: ReturnType<typeof settingsFrom>,
  identity: ServerIdentity,
  model: ModelProfile,
  found: Pick<Profile, "settings" | "trials" | "decisions" | "facts" | "tasks" | "seconds">,
): Profile {
  const settings = Object.fromEntries(
    PROFILE_KEYS.filter((k) => found.settings[k] !== undefined).map((k) => [k, found.settings[k]]),
  ) as ProfileSettings;
  return {
    version: 1,
    at: new Date().toISOString(),
    provider: s.provider,
    url: s.serverUrl,
    identity,
    requested: s.model,
    mode: o.mode,
    k: o.k,
    ...found,
    settings,
    facts: {
      ...found.facts,
      model: `${model.model}: ${model.capabilities.join(", ")}; format ${model.format}${model.contextLength ? `; context ${model.contextLength}` : ""}`,
    },
  };
}
