/**
 * foldLayers with literal layers: what an untrusted layer's value does beside the person's own
 * (the table walk in setting-meta.test.ts covers every entry through a run's config).
 */
import { describe, expect, it } from "vitest";
import { ContextSchema } from "../../../src/coder/context.js";
import { foldLayers, type SettingsLayer } from "../../../src/run/settings-layers.js";

const person = (values: Record<string, unknown>): SettingsLayer => ({
  source: "person",
  name: "the run's own settings",
  values,
});
const project = (values: Record<string, unknown>): SettingsLayer => ({
  source: "project",
  name: "settings file /w/.keel/settings.json",
  values,
});
const fold = (...layers: SettingsLayer[]) => foldLayers(ContextSchema, layers);

describe("foldLayers", () => {
  it("a budget is lowered below the person's own, not below an unset one's default", () => {
    // the person's explicit undefined is no value of theirs: the default (40) is the bar
    expect(fold(project({ maxTurns: 39 }), person({ maxTurns: undefined })).values.maxTurns).toBe(
      39,
    );
    const raised = fold(person({ maxTurns: 10 }), project({ maxTurns: 20 }));
    expect(raised.values.maxTurns).toBe(10);
    expect(raised.refused.map((r) => [r.key, r.why])).toEqual([
      ["maxTurns", expect.stringMatching(/may only lower it \(yours: 10\)/)],
    ]);
  });

  it("a value the person's own layers give anyway is neither taken nor refused", () => {
    const same = fold(
      person({ approval: "ask" }),
      project({ approval: "ask", autoApprove: false }),
    );
    expect(same.refused).toEqual([]);
    expect(same.values).toEqual({ approval: "ask" });
  });

  it("added rules survive a later person's list; keys the run has no setting for are left", () => {
    const r = fold(
      project({ denyRules: ["edit_file(.env)"], target: "/elsewhere" }),
      person({ denyRules: ["run_command(rm -rf*)"] }),
    );
    expect(r.values).toEqual({ denyRules: ["run_command(rm -rf*)", "edit_file(.env)"] });
    expect(r.refused).toEqual([]);
  });

  it("refuses each entry the person's alone, naming the layer and the key", () => {
    const r = fold(project({ provider: "openai", runCommandsUnsandboxed: true, model: "m:1b" }));
    expect(r.values).toEqual({ model: "m:1b" });
    expect(r.refused.map((x) => `${x.layer.name} ${x.key}`)).toEqual([
      "settings file /w/.keel/settings.json provider",
      "settings file /w/.keel/settings.json runCommandsUnsandboxed",
    ]);
  });
});
