/**
 * The pure parts of calibration: candidates, racing and winning, profiles (reading, matching,
 * staleness, what they may set), the profile's layer beneath the other settings, the canary's
 * prompt and answers, keep_alive durations, and budgets that fit the window.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fittedBudget } from "../../src/models/budget.js";
import { canaryPrompt, readAnswer } from "../../src/models/canary.js";
import { estimateTokens } from "../../src/guard/token-estimate.js";
import type { ServerIdentity } from "../../src/models/identity.js";
import { profileLayer } from "../../src/run/profile-use.js";
import {
  matchProfile,
  profileFile,
  readProfiles,
  writeProfile,
  type Profile,
} from "../../src/run/profiles.js";
import { layered } from "../../src/run/layered.js";
import { keepAliveMs } from "../../src/testing/fake-ollama/residency.js";

const identity: ServerIdentity = {
  server: "ollama",
  version: "0.24.0",
  model: "m:latest",
  digest: "sha256:aaaa",
};

const profile = (over: Partial<Profile> = {}): Profile => ({
  version: 1,
  at: "2026-11-28T10:00:00.000Z",
  provider: "ollama",
  url: "http://127.0.0.1:11434",
  identity,
  requested: "m",
  mode: "quick",
  k: 1,
  tasks: ["create-greet"],
  settings: { contextWindow: 4096, generationBudget: { act: 2048 } },
  trials: [],
  decisions: [],
  facts: {},
  seconds: 12,
  ...over,
});

describe("profiles", () => {
  it("kept under the state folder by server and model; read back; matched only to the same model, digest and version", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-prof-"));
    const file = writeProfile(dir, profile());
    expect(file).toBe(profileFile(dir, "ollama", "http://127.0.0.1:11434", "m:latest"));
    expect(file.startsWith(path.join(dir, "profiles"))).toBe(true);
    const found = readProfiles(dir, "ollama", "http://127.0.0.1:11434/");
    expect(found.profiles).toHaveLength(1);
    expect(matchProfile(found, identity).status).toBe("applied");
    expect(matchProfile(found, { ...identity, digest: "sha256:bbbb" })).toMatchObject({
      status: "stale",
      why: expect.stringMatching(/the model's digest changed \(aaaa then, bbbb now\)/),
    });
    expect(matchProfile(found, { ...identity, version: "0.25.0" })).toMatchObject({
      status: "stale",
      why: expect.stringMatching(/the server's version changed \(0\.24\.0 then, 0\.25\.0 now\)/),
    });
    expect(matchProfile(found, { ...identity, model: "other:latest" }).status).toBe("none");
    expect(readProfiles(dir, "ollama", "http://127.0.0.1:11435").profiles).toEqual([]);
  });

  it("a file that is not a profile, or sets what calibration does not choose, is unreadable and never used", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "keel-prof-"));
    const file = profileFile(dir, "ollama", "http://h", "m:latest");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(profile({ settings: { autoApprove: true } as never })));
    writeFileSync(`${path.dirname(file)}/broken.json`, "{ not json");
    const found = readProfiles(dir, "ollama", "http://h");
    expect(found.profiles).toEqual([]);
    expect(found.unreadable.map((u) => path.basename(u.file)).sort()).toEqual(
      ["broken.json", path.basename(file)].sort(),
    );
    expect(() => writeProfile(dir, profile({ settings: { contextWindow: 12 } }))).toThrow();
  });

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

describe("the canary", () => {
  it("a prompt of about the tokens asked for, opening with the marker, that asks it back", () => {
    const p = canaryPrompt("KEEL-CANARY-TEST", 3000);
    expect(p.startsWith("The code is KEEL-CANARY-TEST.")).toBe(true);
    expect(p).toMatch(/Reply with the code only\.$/);
    expect(Math.abs(estimateTokens(p) - 3000)).toBeLessThan(60);
    expect(new Set(p.split("\n")).size).toBe(p.split("\n").length);
  });

  it("reads what the server says: counts, cache, refusals with their sizes, errors", () => {
    expect(
      readAnswer(
        200,
        JSON.stringify({
          choices: [{ message: { content: "x" }, finish_reason: "length" }],
          usage: {
            prompt_tokens: 90,
            completion_tokens: 1,
            prompt_tokens_details: { cached_tokens: 80 },
          },
        }),
        false,
      ),
    ).toMatchObject({ counted: 90, cached: 80, generated: 1, finish: "length", reply: "x" });
    expect(
      readAnswer(
        400,
        '{"error":{"code":400,"message":"request (3053 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":3053,"n_ctx":512}}',
        false,
      ).overContext,
    ).toEqual({ prompt: 3053, window: 512 });
    expect(
      readAnswer(400, '{"error":"the input length exceeds the context length"}', true).overContext,
    ).toEqual({});
    expect(
      readAnswer(
        500,
        '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}',
        false,
      ),
    ).toMatchObject({ status: 500, error: "tools param requires --jinja flag" });
    expect(
      readAnswer(
        200,
        '{"message":{"content":"hi"},"prompt_eval_count":12,"eval_count":1,"load_duration":5}',
        true,
      ),
    ).toMatchObject({ counted: 12, generated: 1, loadNs: 5, reply: "hi" });
  });

  it("keep_alive as Ollama reads it: Go durations, seconds, negative for ever", () => {
    expect(keepAliveMs("5m")).toBe(300_000);
    expect(keepAliveMs("1h30m")).toBe(5_400_000);
    expect(keepAliveMs("250ms")).toBe(250);
    expect(keepAliveMs(30)).toBe(30_000);
    expect(keepAliveMs("0")).toBe(0);
    expect(keepAliveMs("-1")).toBe(Infinity);
    expect(keepAliveMs("soon")).toBeUndefined();
  });
});

describe("budgets that fit the window", () => {
  it("the call's budget, or what the window leaves after the prompt and a margin, whichever is less", () => {
    expect(fittedBudget(8192, 16384, 1500)).toBe(8192);
    // 4096 - 2500 - (16 + 250)
    expect(fittedBudget(8192, 4096, 2500)).toBe(1330);
    expect(fittedBudget(256, 4096, 2500)).toBe(256);
    // a prompt that leaves nothing still gets the least budget a request may have
    expect(fittedBudget(8192, 4096, 4000)).toBe(16);
  });
});
