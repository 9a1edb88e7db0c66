/** A run's settings: parsed once per run context, frozen, and read from no settings file by its nodes. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runConfig, settingsFrom } from "../../../src/coder/context.js";
import { PROJECT_SETTINGS } from "../../../src/run/settings-file.js";
import { tempWorkspace } from "../../support/harness.js";

describe("run settings", () => {
  it("are parsed once per run context and frozen", () => {
    const context = { model: "m:1", maxTurns: 7 };
    const a = settingsFrom({ context, configurable: { thread_id: "t" } });
    const b = settingsFrom({ context, configurable: { thread_id: "t", checkpoint_ns: "x" } });
    expect(b).toBe(a);
    expect(a.maxTurns).toBe(7);
    expect(Object.isFrozen(a)).toBe(true);
    // another context, or a setting changed through configurable, is parsed again
    expect(settingsFrom({ context: { ...context } })).not.toBe(a);
    const shared = {};
    expect(settingsFrom({ context: shared, configurable: { maxTurns: 3 } }).maxTurns).toBe(3);
    expect(settingsFrom({ context: shared, configurable: { maxTurns: 5 } }).maxTurns).toBe(5);
  });

  it("of a run made by runConfig are the ones it parsed: the run's nodes read no settings file", () => {
    const ws = tempWorkspace();
    const file = path.join(ws, PROJECT_SETTINGS);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify({ model: "from-the-file:1" }));
    const config = runConfig("t", { workspace: ws });
    const fresh = settingsFrom({ ...config, context: { ...config.context } });
    // The file broken after the run started (the agent writes there): the run's nodes, which
    // ask for the settings at every step, go on with the ones it started with.
    writeFileSync(file, "{ not json");
    const s = settingsFrom(config);
    expect(s.model).toBe("from-the-file:1");
    expect(s).toEqual(fresh);
    expect(settingsFrom(config)).toBe(s);
    expect(Object.isFrozen(s)).toBe(true);
    // A context parsed anew reads the file, and names it.
    expect(() => settingsFrom({ ...config, context: { ...config.context } })).toThrow(
      /settings\.json/,
    );
  });
});
