/**
 * The calibration profile as a settings layer: the lowest, beneath the settings files, the
 * environment and the run's own; what it gives, applied and overridden; and chosen by the server
 * the person's own settings name — a project's file can neither point the lookup at another server
 * nor raise what the profile set.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ContextSchema } from "../../../src/coder/context.js";
import { layered } from "../../../src/run/layered.js";
import { profileOf, profileLayer } from "../../../src/run/profile-use.js";
import { writeProfile, type Profile } from "../../../src/run/profiles.js";

/** A workspace whose project settings file says `settings`. */
function project(settings: Record<string, unknown>): string {
  const ws = mkdtempSync(path.join(tmpdir(), "keel-prof-ws-"));
  mkdirSync(path.join(ws, ".keel"));
  writeFileSync(path.join(ws, ".keel", "settings.json"), JSON.stringify(settings));
  return ws;
}

/** A server no test listens on: a profile for it exists; nothing may ask it. */
const ELSEWHERE = "http://127.0.0.1:9";

const profileAt = (url: string): Profile => ({
  version: 1,
  at: "2026-11-28T10:00:00.000Z",
  provider: "ollama",
  url,
  identity: { server: "ollama", version: "0.24.0", model: "m:latest", digest: "sha256:aaaa" },
  requested: "m:latest",
  mode: "quick",
  k: 1,
  tasks: ["create-greet"],
  settings: { toolMode: "prompt", contextWindow: 4096 },
  trials: [],
  decisions: [],
  facts: {},
  seconds: 1,
});

describe("the calibration profile's layer", () => {
  it("is the lowest: a project's file sets over it what it may, and cannot raise the budget the profile set", () => {
    const ws = project({ contextWindow: 8192, generationBudget: { act: 65536 } });
    const values = layered(
      ContextSchema,
      { workspace: ws, toolMode: "native" },
      {
        profile: {
          toolMode: "prompt",
          contextWindow: 4096,
          thinkCut: 512,
          generationBudget: { act: 2048 },
        },
      },
    );
    expect(values).toMatchObject({
      toolMode: "native", // the run's own
      contextWindow: 8192, // the project's (anyone may set it)
      thinkCut: 512, // the profile's
      generationBudget: { act: 2048 }, // the project's raise refused: the profile's stands
    });
  });

  it("is found by the person's server: a project's file naming another server is refused, and that server is never asked", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "keel-prof-state-"));
    writeProfile(stateDir, profileAt(ELSEWHERE));
    const ws = project({ provider: "ollama", ollamaUrl: ELSEWHERE });
    const asked: string[] = [];
    const fetchImpl = (async (url: string | URL | Request) => {
      asked.push(url instanceof Request ? url.url : url.toString());
      return Promise.reject(new Error("no server here"));
    }) as typeof fetch;
    const { beneath, use } = await profileOf(
      ContextSchema,
      { workspace: ws, model: "m:latest" },
      { stateDir, fetchImpl },
    );
    expect(asked).toEqual([]);
    expect(use.status).toBe("none");
    expect(beneath).toEqual({});
    // the person naming that server finds it (and asks it which model it serves)
    const mine = await profileOf(
      ContextSchema,
      { workspace: ws, model: "m:latest", ollamaUrl: ELSEWHERE },
      { stateDir, fetchImpl },
    );
    expect(mine.use.status).toBe("unchecked");
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((u) => u.startsWith(ELSEWHERE))).toBe(true);
  });
});

describe("profiles", () => {
  it("its layer: what it gives beneath, what it applied, what the sources above set; objects merge beneath", () => {
    const schema = z.object({
      contextWindow: z.number().optional(),
      generationBudget: z.record(z.string(), z.number()).optional(),
      toolMode: z.string().optional(),
    });
    const layer = profileLayer(
      { contextWindow: 4096, generationBudget: { act: 2048, plan: 512 }, concurrency: 1 },
      schema,
      { generationBudget: { act: 16000 } },
    );
    expect(layer.beneath).toEqual({
      contextWindow: 4096,
      generationBudget: { act: 2048, plan: 512 },
    });
    expect(layer.applied).toEqual(["contextWindow", "generationBudget (plan)"]);
    expect(layer.overridden).toEqual(["generationBudget"]);
    // layered: the flags' value over the profile's, its kinds merged
    expect(
      layered(
        schema,
        { generationBudget: { act: 16000 }, toolMode: "native" },
        { profile: layer.beneath },
      ),
    ).toMatchObject({
      contextWindow: 4096,
      generationBudget: { act: 16000, plan: 512 },
      toolMode: "native",
    });
  });
});
