/** A worker's settings for a job: its flags over the person's own file, never a project's. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { analystSettingsFrom } from "../../../src/analyst/context.js";
import { jobConfig } from "../../../src/distributed/worker-settings.js";
import { tempWorkspace } from "../../support/harness.js";

describe("a worker's settings for a job", () => {
  it("come from its flags over the person's own file: never a project's, whatever the job or the folder", () => {
    const home = tempWorkspace("keel-worker-home-");
    mkdirSync(path.join(home, "keel"), { recursive: true });
    writeFileSync(
      path.join(home, "keel/settings.json"),
      JSON.stringify({ contextWindow: 3000, temperature: 0.5 }),
    );
    const cwd = tempWorkspace("keel-worker-cwd-");
    mkdirSync(path.join(cwd, ".keel"));
    writeFileSync(path.join(cwd, ".keel/settings.json"), JSON.stringify({ contextWindow: 5000 }));
    const was = { xdg: process.env.XDG_CONFIG_HOME, cwd: process.cwd() };
    process.env.XDG_CONFIG_HOME = home;
    process.chdir(cwd);
    try {
      const job = { model: "m", depth: "quick", provider: "ollama", url: "http://gpu:1" } as const;
      const s = analystSettingsFrom(jobConfig("run-1", { temperature: 0.1 }, job));
      expect(s).toMatchObject({
        contextWindow: 3000,
        temperature: 0.1,
        model: "m",
        depth: "quick",
        serverUrl: "http://gpu:1",
      });
      // resolved per job: the next job reads the file as it is then
      writeFileSync(path.join(home, "keel/settings.json"), JSON.stringify({ contextWindow: 4000 }));
      expect(analystSettingsFrom(jobConfig("run-2", {}, job)).contextWindow).toBe(4000);
    } finally {
      process.chdir(was.cwd);
      if (was.xdg === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = was.xdg;
    }
  });
});
