/** Calibration profiles: kept by server and model, read back, matched, and refused when not a profile. */
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ServerIdentity } from "../../../src/models/identity.js";
import {
  matchProfile,
  profileFile,
  readProfiles,
  writeProfile,
  type Profile,
} from "../../../src/run/profiles.js";

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
});
