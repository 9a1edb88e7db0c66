/**
 * keel calibrate against the fake Ollama with scripted profiles whose best configuration differs
 * (src/testing/calibration-models.ts): calibrate picks the winner, writes the profile to the state
 * folder, and the next keel run sends it — asserted on what the fake received. A flag still wins;
 * a changed digest or server version makes the profile stale and the run uses keel's defaults.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Profile } from "../../src/run/profiles.js";
import { CALIBRATION_MODELS, calibrationScript } from "../../src/testing/calibration-models.js";
import type { ChatBody, FakeModel } from "../../src/testing/fake-ollama/types.js";
import { runKeel } from "../support/cli.js";
import { fakeOllamaPerTest, keelScript, tempWorkspace } from "../support/harness.js";

const startFake = fakeOllamaPerTest();

/** A fake serving the calibration profiles (a copy of their models: a test may change a digest). */
async function serve(opts: { version?: string } = {}) {
  const models: Record<string, FakeModel> = structuredClone(CALIBRATION_MODELS);
  const fake = await startFake({ models, script: calibrationScript(), ...opts });
  return { fake, models };
}

const state = () => mkdtempSync(path.join(tmpdir(), "keel-state-"));

async function calibrate(url: string, stateDir: string, model: string, tasks: string[]) {
  const r = await runKeel(
    [
      "calibrate",
      "-m",
      model,
      "--ollama-url",
      url,
      "--json",
      ...tasks.flatMap((t) => ["--task", t]),
    ],
    { env: { KEEL_STATE_DIR: stateDir } },
  );
  expect(r.code, r.stderr).toBe(0);
  return { ...r, profile: JSON.parse(r.stdout) as Profile };
}

async function run(
  url: string,
  stateDir: string,
  model: string,
  request: string,
  more: string[] = [],
) {
  const ws = tempWorkspace();
  const r = await runKeel(
    ["run", request, "-w", ws, "--ollama-url", url, "-m", model, "--json", ...more],
    { env: { KEEL_STATE_DIR: stateDir } },
  );
  return { ...r, ws, settings: (r.json?.settings ?? {}) as Record<string, unknown> };
}

/** The chat requests of model turns (no `format`) sent since `from`. */
const turns = (bodies: ChatBody[], from: number) =>
  bodies.slice(from).filter((b) => b.format === undefined);

describe("keel calibrate", () => {
  it("native tools broken, prompt mode works: prompt mode wins, and the next run sends tools in the prompt", async () => {
    const { fake } = await serve();
    const dir = state();
    const { profile, stderr } = await calibrate(fake.url, dir, "native-broken", ["create-greet"]);
    expect(profile.settings).toMatchObject({ toolMode: "prompt", toolFormat: "hermes" });
    const channel = profile.trials.filter((t) => t.dimension === "channel");
    expect(channel.map((t) => [t.label, t.passK])).toEqual([
      ["native", 0],
      ["prompt (hermes)", 1],
      ["prompt (llama3-json)", 1],
    ]);
    expect(profile.decisions.find((d) => d.dimension === "channel")?.winner).toBe(
      "prompt (hermes)",
    );
    // progress says what is tried, how it did and what leads
    expect(stderr).toMatch(
      /channel\s+native · create-greet #1: fail, 0\/1 calls well formed.* · leads: native \(0 passed\)/,
    );
    expect(stderr).toMatch(
      /channel\s+prompt \(hermes\) · create-greet #1: pass.* · leads: prompt \(hermes\) \(1 passed\)/,
    );
    expect(stderr).toMatch(/channel\s+→ prompt \(hermes\): pass\^k 1\/1/);
    // kept in the state folder, not in a workspace
    expect(readdirSync(path.join(dir, "profiles"))).toHaveLength(1);

    const before = fake.chatBodies().length;
    const r = await run(
      fake.url,
      dir,
      "native-broken",
      'Create greet.js exporting a function greet(name) that returns "Hello, <name>!" (for example greet("Ada") is "Hello, Ada!"). The project uses ES modules.',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(path.join(r.ws, "greet.js"))).toBe(true);
    const sent = turns(fake.chatBodies(), before);
    expect(sent.length).toBeGreaterThan(0);
    for (const b of sent) {
      expect(b.tools ?? []).toEqual([]);
      expect(b.messages![0]!.content).toContain("<calling_tools>");
      expect(b.messages![0]!.content).toContain("<tool_call>");
    }
    expect(r.settings.toolMode).toBe("prompt");
    // concurrency is the analyst's: a coder run takes the channel only
    expect(r.settings.profile).toMatchObject({
      status: "applied",
      applied: ["toolMode", "toolFormat"],
    });
    expect(r.stdout + r.stderr).toMatch(
      /calibration: calibrated .* on this server for native-broken:latest/,
    );

    // keel models and keel doctor say which profile applies, and why
    const models = await runKeel(["models", "--ollama-url", fake.url], {
      env: { KEEL_STATE_DIR: dir },
    });
    expect(models.stdout).toMatch(/native-broken:latest\s.*\sprompt\s+hermes\s+applied/);
    expect(models.stdout).toMatch(/short-memory:latest\s.*\snative\s+hermes\s+—/);
    expect(models.stdout).toMatch(/native-broken:latest: calibration: calibrated/);
    const doctor = await runKeel(
      ["doctor", "-m", "native-broken", "--ollama-url", fake.url, "--no-canary", "--json"],
      { env: { KEEL_STATE_DIR: dir } },
    );
    expect(doctor.json).toMatchObject({ profile: { status: "applied", toolMode: "prompt" } });
    expect(doctor.json).not.toHaveProperty("path");
  });

  it("a model that holds less than it claims: the smaller window wins; the next run asks for it; a flag still wins", async () => {
    const { fake } = await serve();
    const dir = state();
    const { profile } = await calibrate(fake.url, dir, "short-memory", ["analyse-long"]);
    expect(profile.settings.contextWindow).toBe(4096);
    expect(profile.facts.recall).toMatch(/repeats the marker at 4096/);
    const context = profile.trials.filter((t) => t.dimension === "context");
    expect(context.map((t) => [t.label, t.passK])).toEqual([
      ["window 16384", 0],
      ["window 4096", 1],
    ]);

    const request =
      "data/users.js lists the users. What is the name of the user with id 250? Answer with the name.";
    let from = fake.chatBodies().length;
    const calibrated = await run(fake.url, dir, "short-memory", request);
    expect(calibrated.code, calibrated.stderr).toBe(0);
    expect(calibrated.settings.contextWindow).toBe(4096);
    const asked = fake.chatBodies().slice(from);
    expect(asked.every((b) => b.options?.num_ctx === 4096)).toBe(true);

    // a flag wins over the profile, and the run says so
    from = fake.chatBodies().length;
    const flagged = await run(fake.url, dir, "short-memory", request, ["--context-window", "8192"]);
    expect(
      fake
        .chatBodies()
        .slice(from)
        .every((b) => b.options?.num_ctx === 8192),
    ).toBe(true);
    expect(flagged.settings.profile).toMatchObject({
      status: "applied",
      overridden: ["contextWindow"],
    });
  });

  it("a thinking model that spends its budget unless cut: the thinking cut wins; the next run cuts and goes on without thinking", async () => {
    const { fake } = await serve();
    const dir = state();
    const { profile } = await calibrate(fake.url, dir, "overthinker", ["create-greet"]);
    expect(profile.settings).toMatchObject({ think: "on", thinkCut: 512 });
    expect(
      profile.trials.filter((t) => t.dimension === "thinking").map((t) => [t.label, t.passK]),
    ).toEqual([
      ["thinking on", 0],
      ["thinking off", 0],
      ["thinking cut at 512 tokens", 1],
    ]);

    const from = fake.chatBodies().length;
    const fromPrefill = fake.prefill.length;
    const r = await run(
      fake.url,
      dir,
      "overthinker",
      'Create greet.js exporting a function greet(name) that returns "Hello, <name>!" (for example greet("Ada") is "Hello, Ada!"). The project uses ES modules.',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(path.join(r.ws, "greet.js"), "utf8")).toContain("Hello");
    const sent = turns(fake.chatBodies(), from);
    // a turn that thinks is cut; the same turn asked again without thinking, the thought given
    const cutAt = sent.findIndex((b) => b.think === true);
    expect(cutAt).toBeGreaterThanOrEqual(0);
    const again = sent[cutAt + 1]!;
    expect(again.think).toBe(false);
    expect(again.messages!.at(-1)!.content).toMatch(/Your thinking was stopped after 512 tokens/);
    // the thinking stream was left long before its 20,000 tokens: the fake saw the client leave
    expect(fake.prefill.slice(fromPrefill).some((p) => p.clientLeftAfter === 0)).toBe(true);
    expect(r.stdout + r.stderr).toMatch(/thinking stopped after ~512 tokens/);
  });

  it("a changed digest or server version makes the profile stale: keel says so and uses its defaults", async () => {
    const { fake, models } = await serve();
    const dir = state();
    await calibrate(fake.url, dir, "short-memory", ["analyse-long"]);
    models["short-memory"]!.digest = "b".repeat(64);
    const request =
      "data/users.js lists the users. What is the name of the user with id 250? Answer with the name.";
    const from = fake.chatBodies().length;
    const r = await run(fake.url, dir, "short-memory", request);
    expect(r.settings.profile).toMatchObject({ status: "stale" });
    expect(String((r.settings.profile as { why: string }).why)).toMatch(
      /the model's digest changed/,
    );
    expect(r.stdout + r.stderr).toMatch(/calibration: not used, the model's digest changed/);
    expect(
      fake
        .chatBodies()
        .slice(from)
        .every((b) => b.options?.num_ctx === 16384),
    ).toBe(true);

    // another model on the same server never gets this one's profile
    const other = await run(fake.url, dir, "native-broken", "Create a.txt containing a");
    expect(other.settings.profile).toMatchObject({ status: "none" });
    expect(other.settings.toolMode).toBe("auto");

    // --show prints what was tried and what won
    const shown = await runKeel(
      ["calibrate", "--show", "-m", "short-memory", "--ollama-url", fake.url],
      {
        env: { KEEL_STATE_DIR: dir },
      },
    );
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/context\s+window 16384\s+0\/1/);
    expect(shown.stdout).toMatch(/won[\s\S]*context\s+window 4096/);
    expect(shown.stdout).toMatch(/calibration: not used, the model's digest changed/);
  });

  it("a model that drives neither channel ends the search after two attempts: keel's defaults stand, and the profile says why", async () => {
    const fake = await startFake({
      models: {
        mute: { capabilities: ["completion", "tools"], family: "qwen2", contextLength: 32768 },
      },
      script: keelScript(() => ({ content: "I am not able to help with that." })),
    });
    const dir = state();
    const { profile, stderr } = await calibrate(fake.url, dir, "mute", []);
    // two attempts (native, then prompt mode) of the first task, not the nine of three candidates × three tasks
    expect(profile.trials.map((t) => [t.label, t.attempts])).toEqual([
      ["native", 1],
      ["prompt (hermes)", 1],
      ["prompt (llama3-json)", 0],
    ]);
    expect(profile.facts.search).toMatch(
      /ended early: on create-greet, native and prompt \(hermes\) passed nothing/,
    );
    expect(profile.settings).toEqual({ concurrency: expect.any(Number) });
    expect(stderr).toMatch(/channel\s+→ native: on create-greet/);
  });

  it("a profile file that does not parse is named and never used; one that sets what calibration does not choose is refused", async () => {
    const { fake } = await serve();
    const dir = state();
    const { profile } = await calibrate(fake.url, dir, "short-memory", ["analyse-long"]);
    const folder = path.join(dir, "profiles", readdirSync(path.join(dir, "profiles"))[0]!);
    const file = path.join(folder, readdirSync(folder)[0]!);
    writeFileSync(
      file,
      JSON.stringify({ ...profile, settings: { ...profile.settings, autoApprove: true } }),
    );
    const r = await run(fake.url, dir, "short-memory", "Create a.txt containing a");
    expect(r.settings.profile).toMatchObject({ status: "none" });
    expect(String((r.settings.profile as { why: string }).why)).toMatch(
      /unreadable: .*autoApprove|unreadable: .*Unrecognized/,
    );
    expect(r.settings.autoApprove).toBe(false);
    expect(r.settings.contextWindow).toBe(16384);
  });
});
