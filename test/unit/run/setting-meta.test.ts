// Walks setting-meta.ts's table through every source it names (files, environment, the flags of cli/): one file by design.
/**
 * The settings table, walked entry by entry: every run setting of the coder and the analyst reaches
 * a run's config from each source its entry names — the user's file, its environment variable, and
 * its flag on each command that takes it — and from a project's file and an API caller exactly as
 * its trust says (set, lowered only, added, or refused: named once, the rest of the file applied;
 * an API caller's run refused). Every entry decides its trust, and only the reviewed harmless ones
 * are taken from others. docs/settings.md is what the table says.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ContextSchema, runConfig } from "../../../src/coder/context.js";
import { AnalystContextSchema, analystRunConfig } from "../../../src/analyst/context.js";
import { analyzeCommand } from "../../../src/cli/analyze.js";
import { evalCommand } from "../../../src/cli/eval.js";
import { runCommandDef } from "../../../src/cli/run.js";
import { resolvedServer } from "../../../src/cli/server-options.js";
import { flagSettings } from "../../../src/cli/setting-flags.js";
import { workerCommand } from "../../../src/cli/worker.js";
import {
  defaultOf,
  innerType,
  metaOf,
  settingTable,
  TRUST,
  type SettingCommand,
  type Trust,
} from "../../../src/run/setting-meta.js";
import { SettingsFileError } from "../../../src/run/settings-file.js";
import { callerContext } from "../../../src/run/settings.js";
import { SETTINGS_DOC, settingsDoc } from "../../../scripts/docs-settings.js";

const GRAPHS = [
  {
    name: "coder",
    schema: ContextSchema,
    folder: "workspace",
    config: (given: Record<string, unknown>) => runConfig("t", given).context,
  },
  {
    name: "analyst",
    schema: AnalystContextSchema,
    folder: "target",
    config: (given: Record<string, unknown>) => analystRunConfig("t", given).context,
  },
] as const;

/**
 * The entries a project's file or an API caller may give, reviewed one by one: each is harmless
 * (it changes neither where the person's prompts, keys or trust go nor a guard), a budget they may
 * only lower, rules they may only add to, or the run's folder. Every other entry is the person's
 * alone. A new entry that is not the person's alone fails here until someone reviews it.
 */
const REVIEWED: Record<Exclude<Trust, "person">, string[]> = {
  anyone: [
    "model",
    "temperature",
    "think",
    "contextWindow",
    "cacheReuse",
    "toolMode",
    "toolFormat",
    "thinkCut",
    "interactive",
    "learnDescriptions",
    "depth",
    "concurrency",
  ],
  lower: ["maxTurns", "maxToolCalls"],
  added: ["askRules", "denyRules"],
  folder: ["workspace", "target"],
};

/** The commands built as keel builds them, so the test sees the flags they really have. */
const COMMANDS: Partial<Record<SettingCommand, () => Command>> = {
  run: runCommandDef,
  analyze: analyzeCommand,
  eval: evalCommand,
  worker: workerCommand,
};

/** A value of the field other than its default: the entry's example, else one from its type. */
function sample(schema: z.ZodObject, key: string): unknown {
  const meta = metaOf(schema, key);
  if (meta.example !== undefined) return meta.example;
  const t = innerType(schema.shape[key] as z.ZodType);
  const d = defaultOf(schema, key);
  if (t instanceof z.ZodEnum) return t.options.find((o) => o !== d);
  if (t instanceof z.ZodBoolean) return !d;
  if (t instanceof z.ZodNumber)
    return (t.maxValue ?? Infinity) > Number(d) ? Number(d) + 1 : Number(d) - 1;
  if (t instanceof z.ZodArray) return [`/tmp/sample-${key}`];
  if (t instanceof z.ZodString) return `sample-${key}`;
  throw new Error(`${key}: give its entry an example (type ${t.def.type})`);
}

/** A value an untrusted source tries: a budget lowered, else one other than the default. */
function untrustedSample(schema: z.ZodObject, key: string): unknown {
  return metaOf(schema, key).trust === "lower"
    ? Number(defaultOf(schema, key)) - 1
    : sample(schema, key);
}

/** A harmless entry a project's file sets beside `key`, to show the rest of the file applies. */
const companion = (key: string): [string, unknown] =>
  key === "model" ? ["temperature", 1.5] : ["model", "harmless:1b"];

/** The person's own list an untrusted source adds to (for an `added` entry), in their file. */
const additions = (schema: z.ZodObject, key: string) =>
  metaOf(schema, key).trust === "added" ? { [key]: ["read_file(mine)"] } : {};

/** What a run holds after an untrusted source gave `value` for `key`, by what its entry says. */
function expectTaken(
  schema: z.ZodObject,
  key: string,
  take: string,
  value: unknown,
  actual: unknown,
) {
  if (take === "set" || take === "lower") expectHolds(actual, value);
  else if (take === "add") expect(actual).toEqual(["read_file(mine)", ...(value as unknown[])]);
  else if (take === "refuse") expect(actual).toEqual(defaultOf(schema, key));
  else throw new Error(`${key}: an untrusted source's value is ${take}: test it here`);
}

/** A run's config holds `value` (objects: the fields given, over the defaults of the rest). */
function expectHolds(actual: unknown, value: unknown) {
  if (value && typeof value === "object" && !Array.isArray(value))
    expect(actual).toMatchObject(value);
  else expect(actual).toEqual(value);
}

const temp = (prefix: string) => mkdtempSync(path.join(tmpdir(), prefix));
const saved = { ...process.env };
let folder: string;
let userFile: string;
beforeEach(() => {
  folder = temp("keel-table-ws-");
  const home = temp("keel-table-home-");
  process.env.XDG_CONFIG_HOME = home;
  userFile = path.join(home, "keel", "settings.json");
  for (const name of [
    "KEEL_MODEL",
    "KEEL_PROVIDER",
    "KEEL_BASE_URL",
    "OLLAMA_HOST",
    "OPENAI_API_KEY",
  ])
    delete process.env[name];
});
afterEach(() => {
  process.env = { ...saved };
});

function writeJson(file: string, value: unknown) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(value));
}

for (const g of GRAPHS) {
  const keys = Object.keys(g.schema.shape).filter((k) => metaOf(g.schema, k).trust !== "folder");

  describe(`the ${g.name}'s settings, entry by entry`, () => {
    it.each(keys)("%s: from the user's file", (key) => {
      const value = sample(g.schema, key);
      expect(value).not.toEqual(defaultOf(g.schema, key));
      writeJson(userFile, { [key]: value });
      expectHolds(g.config({ [g.folder]: folder })[key as never], value);
    });

    it.each(Object.keys(g.schema.shape))("%s: its entry decides who may give it", (key) => {
      const entry = settingTable.get((g.schema.shape as Record<string, z.ZodType>)[key]!);
      expect(entry?.trust, `${key} has no trust in the settings table`).toBeDefined();
      expect(Object.keys(TRUST)).toContain(entry!.trust);
      const reviewed = Object.entries(REVIEWED).find(([, keys]) => keys.includes(key))?.[0];
      expect(entry!.trust, `${key}: not reviewed as anything but the person's`).toBe(
        reviewed ?? "person",
      );
      // what names a key, a path, a program or a server is the person's, whatever the review says
      const field = innerType((g.schema.shape as Record<string, z.ZodType>)[key]!);
      const url = field.safeParse("http://127.0.0.1:1").success && !field.safeParse("x").success;
      if (entry!.secret || entry!.paths || url) expect(entry!.trust).toBe("person");
    });

    it.each(keys)(
      "%s: from a project's file, as its trust says; the rest of the file applies",
      (key) => {
        const { project } = TRUST[metaOf(g.schema, key).trust];
        const file = path.join(folder, ".keel", "settings.json");
        const value = untrustedSample(g.schema, key);
        const [other, otherValue] = companion(key);
        writeJson(userFile, additions(g.schema, key));
        writeJson(file, { [key]: value, [other]: otherValue });
        const said = vi.spyOn(process, "emitWarning").mockImplementation(() => {});
        try {
          const first = g.config({ [g.folder]: folder });
          const again = g.config({ [g.folder]: folder });
          expect(first[other as never]).toEqual(otherValue);
          expectTaken(g.schema, key, project, value, first[key as never]);
          expect(again[key as never]).toEqual(first[key as never]);
          const lines = said.mock.calls.map((c) => String(c[0]));
          if (project === "refuse") {
            expect(lines).toEqual([
              expect.stringContaining(`settings file ${file}, field "${key}": refused`),
            ]);
          } else expect(lines).toEqual([]);
          if (project === "lower") {
            // a higher one is refused
            writeJson(file, { [key]: Number(defaultOf(g.schema, key)) + 1 });
            expect(g.config({ [g.folder]: folder })[key as never]).toBe(defaultOf(g.schema, key));
            expect(said.mock.calls.at(-1)?.[0]).toMatch(
              `field "${key}": refused — it may only lower`,
            );
          }
        } finally {
          said.mockRestore();
        }
      },
    );

    it.each(keys)(
      "%s: from an API caller, as its trust says; a refused one stops the run",
      (key) => {
        const { api } = TRUST[metaOf(g.schema, key).trust];
        const value = untrustedSample(g.schema, key);
        writeJson(userFile, additions(g.schema, key));
        const given = { [g.folder]: folder, [key]: value };
        if (api === "refuse") {
          expect(() => callerContext(g.schema, given)).toThrow(SettingsFileError);
          expect(() => callerContext(g.schema, given)).toThrow(
            new RegExp(
              `the run's context \\(an API caller\\): refused "${key}": only the person serving keel`,
            ),
          );
          // what the person's own settings give anyway changes nothing, and is no refusal
          const mine = g.config({ [g.folder]: folder })[key as never];
          expect(() => callerContext(g.schema, { [g.folder]: folder, [key]: mine })).not.toThrow();
        } else {
          const context = callerContext(g.schema, given) as Record<string, unknown>;
          expectTaken(g.schema, key, api, value, context[key]);
        }
        if (api === "lower")
          expect(() =>
            callerContext(g.schema, {
              [g.folder]: folder,
              [key]: Number(defaultOf(g.schema, key)) + 1,
            }),
          ).toThrow(/may only lower it/);
      },
    );

    const withEnv = keys.filter((k) => metaOf(g.schema, k).env);
    it.each(withEnv)("%s: from its environment variable, over both files", (key) => {
      const value = sample(g.schema, key);
      // A value the field takes that is not the sample (a URL field takes only a URL).
      const inFile =
        defaultOf(g.schema, key) ??
        ["from-the-file", "http://from-the-file.invalid"].find(
          (v) => (g.schema.shape as Record<string, z.ZodType>)[key]!.safeParse(v).success,
        );
      writeJson(userFile, { [key]: inFile });
      process.env[metaOf(g.schema, key).env!] = String(value);
      expectHolds(g.config({ [g.folder]: folder })[key as never], value);
    });

    const withFlag = keys.flatMap((k) =>
      (metaOf(g.schema, k).commands ?? [])
        .filter((c) => COMMANDS[c] && metaOf(g.schema, k).flag)
        .map((c) => [k, c] as const),
    );
    it.each(withFlag)("%s: from its flag on keel %s, over the environment", (key, command) => {
      const meta = metaOf(g.schema, key);
      const value = sample(g.schema, key);
      if (meta.env) process.env[meta.env] = "from-the-environment";
      const long = /--[\w-]+/.exec(meta.flag!)![0];
      const argv =
        typeof value === "boolean"
          ? [long]
          : Array.isArray(value)
            ? value.flatMap((v) => [long, String(v)])
            : [long, String(value)];
      const cmd = COMMANDS[command]!();
      cmd.parseOptions(argv);
      const given = flagSettings(cmd);
      expect(Object.keys(given)).toEqual([key]);
      expectHolds(g.config({ [g.folder]: folder, ...given })[key as never], value);
    });
  });
}

describe("the table's rules", () => {
  it("a project's file adds to the user's additive lists, never replaces them", () => {
    writeJson(userFile, { denyRules: ["run_command(rm -rf*)"] });
    writeJson(path.join(folder, ".keel", "settings.json"), { denyRules: ["edit_file(.env)"] });
    expect(runConfig("t", { workspace: folder }).context.denyRules).toEqual([
      "run_command(rm -rf*)",
      "edit_file(.env)",
    ]);
  });

  it("a run that reads no project's file (a worker's) takes nothing from one", () => {
    writeJson(userFile, { depth: "quick" });
    writeJson(path.join(folder, ".keel", "settings.json"), { model: "theirs:1b", depth: "deep" });
    expect(analystRunConfig("t", { target: folder }).context).toMatchObject({
      model: "theirs:1b",
      depth: "deep",
    });
    const own = analystRunConfig("t", { target: folder }, ["user-file", "environment"]).context;
    expect(own).toMatchObject({ model: defaultOf(AnalystContextSchema, "model"), depth: "quick" });
  });

  it("an environment variable the field refuses is named", () => {
    process.env.KEEL_PROVIDER = "bogus";
    expect(() => runConfig("t", { workspace: folder })).toThrow(
      /environment variable KEEL_PROVIDER, field "provider": Invalid option/,
    );
  });

  it("--base-url with no provider set anywhere means provider openai; a provider set stays", () => {
    const url = "http://127.0.0.1:9/v1";
    expect(resolvedServer({ baseUrl: url }, folder)).toMatchObject({ provider: "openai", url });
    process.env.KEEL_PROVIDER = "ollama";
    expect(resolvedServer({ baseUrl: url }, folder).provider).toBe("ollama");
    delete process.env.KEEL_PROVIDER;
    writeJson(userFile, { provider: "ollama" });
    expect(resolvedServer({ baseUrl: url }, folder).provider).toBe("ollama");
    // from the environment alone, the default stays (a shell's KEEL_BASE_URL for another tool)
    rmSync(userFile);
    process.env.KEEL_BASE_URL = url;
    expect(resolvedServer({}, folder).provider).toBe("ollama");
  });

  it("a settings file may not name the run's folder", () => {
    writeJson(userFile, { workspace: "/" });
    expect(() => runConfig("t", { workspace: folder })).toThrow(/run's folder/);
  });

  it("a flag's value is checked against its field, with what it takes", () => {
    const cmd = runCommandDef()
      .exitOverride()
      .configureOutput({ writeErr: () => {} });
    expect(() => cmd.parseOptions(["--max-turns", "0"])).toThrow(/expected a whole number ≥ 1/);
    expect(() => cmd.parseOptions(["--retries", "11"])).toThrow(/from 0 to 10/);
    expect(() => cmd.parseOptions(["--tool-mode", "psychic"])).toThrow(/Allowed choices/);
  });

  it("docs/settings.md is what the table says (npm run docs:settings)", async () => {
    const doc = readFileSync(SETTINGS_DOC, "utf8");
    expect(await settingsDoc(doc)).toBe(doc);
  });
});
