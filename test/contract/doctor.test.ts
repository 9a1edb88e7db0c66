/**
 * `keel doctor` checks the path to the model with a canary, on the fakes and on the real
 * llama-server and Ollama alike (test/contract/targets.ts), each server started wrong in one way:
 * too small a context, `--no-jinja`, `--no-cache-prompt`, a short keep_alive, Ollama's `/v1` (which
 * ignores num_ctx). The doctor names each, with the flag or setting that fixes it, and finds
 * nothing wrong with a server started right. Every check reads what the server reports (its counts,
 * its cache counter, its errors, `/api/ps`): the tiny random model cannot answer the canary, and
 * need not.
 */
import { afterEach, describe, expect, it } from "vitest";
import { stripVTControlCharacters } from "node:util";
import { formatDoctor, type DoctorReport } from "../../src/cli/doctor.js";
import type { Finding } from "../../src/models/path-check.js";
import { runKeel } from "../support/cli.js";
import {
  ollamaTargets,
  openaiTargets,
  type StartOptions,
  type Target,
  type TargetKind,
} from "./targets.js";

let started: Target[] = [];
afterEach(async () => {
  await Promise.all(started.map((t) => t.close()));
  started = [];
});

async function doctor(
  kind: TargetKind,
  start: StartOptions,
  flags: (t: Target) => string[],
  model?: (t: Target) => string,
) {
  const t = await kind.start(start);
  started.push(t);
  const r = await runKeel(["doctor", "--json", "-m", model?.(t) ?? t.model, ...flags(t)]);
  const report = JSON.parse(r.stdout) as DoctorReport;
  expect(report.model?.available, r.stdout + r.stderr).toBe(true);
  // the report people read, as keel doctor prints it without --json
  const text = stripVTControlCharacters(formatDoctor(report));
  return { report, path: report.path ?? [], text };
}

/** A real server's canary on a CPU (a first load, a few thousand tokens of prefill) takes a while. */
const SLOW = 180_000;

const check = (path: Finding[], name: Finding["check"]) => path.find((f) => f.check === name)!;

for (const kind of openaiTargets()) {
  describe(`${kind.name}: keel doctor checks the path`, () => {
    const llama = (t: Target) => ["--provider", "openai", "--base-url", `${t.url}/v1`];

    it(
      "started right: the window held by the server's count, tools carried, the cache on",
      async () => {
        const { path } = await doctor(kind, { ctx: 4096 }, (t) => [
          ...llama(t),
          "--context-window",
          "4096",
        ]);
        expect(path.filter((f) => !f.ok)).toEqual([]);
        expect(check(path, "window").detail).toMatch(
          /held: the server counted \d+ tokens of a prompt keel estimated at \d+ \(window 4096\)/,
        );
        expect(check(path, "tools").detail).toMatch(
          /the template carries them: (\d+) tokens with a tool, (\d+) without/,
        );
        expect(check(path, "cache").detail).toMatch(/took [1-9]\d* of \d+ tokens from the cache/);
        expect(check(path, "slots").detail).toMatch(/^4 slots of 4096 tokens each/);
      },
      SLOW,
    );

    it(
      "too small a context: the slots and what fixes it (-c, or a smaller --context-window)",
      async () => {
        const { path, text } = await doctor(kind, { ctx: 2048 }, (t) => [
          ...llama(t),
          "--context-window",
          "8192",
        ]);
        const slots = check(path, "slots");
        expect(slots.ok).toBe(false);
        expect(slots.detail).toMatch(
          /a slot holds less than keel's window of 8192, so keel fits its prompts to 2048/,
        );
        expect(slots.fix).toMatch(/-c 8192/);
        expect(slots.fix).toMatch(/--context-window 2048/);
        // what keel will use, it holds
        expect(check(path, "window")).toMatchObject({ ok: true });
        expect(text).toMatch(/slots\s+no\s+4 slots of 2048 tokens/);
        expect(text).toMatch(/to fix: start llama-server with a context of 8192 tokens a slot/);
      },
      SLOW,
    );

    it(
      "--no-jinja: every request with tools fails, and the doctor names --jinja",
      async () => {
        const { path, text } = await doctor(kind, { ctx: 4096, noJinja: true }, (t) => [
          ...llama(t),
          "--context-window",
          "4096",
        ]);
        const tools = check(path, "tools");
        expect(tools.ok).toBe(false);
        expect(tools.detail).toBe("500 tools param requires --jinja flag");
        expect(tools.fix).toMatch(/start llama-server with --jinja/);
        expect(text).toMatch(/tools\s+no\s+500 tools param requires --jinja flag/);
      },
      SLOW,
    );

    it("--no-cache-prompt: a repeated prefix comes from the cache not at all, and the doctor says so", async () => {
      const { path } = await doctor(kind, { ctx: 4096, noCachePrompt: true }, (t) => [
        ...llama(t),
        "--context-window",
        "4096",
      ]);
      const cache = check(path, "cache");
      expect(cache.ok).toBe(false);
      expect(cache.detail).toMatch(/took nothing from the cache \(0 of \d+ tokens\)/);
      expect(cache.fix).toMatch(/without --no-cache-prompt/);
    });
  });
}

for (const kind of ollamaTargets()) {
  describe(`${kind.name}: keel doctor checks the path`, () => {
    const native = (t: Target) => ["--ollama-url", t.url];

    it(
      "started right: the window held by the server's count, tools carried, the model kept loaded",
      async () => {
        const { path } = await doctor(kind, { ctx: 2048 }, (t) => [
          ...native(t),
          "--context-window",
          "4096",
        ]);
        expect(path.filter((f) => !f.ok)).toEqual([]);
        expect(check(path, "window").detail).toMatch(/held: the server counted \d+ tokens/);
        expect(check(path, "tools").detail).toMatch(/the template carries them/);
        expect(check(path, "cache").detail).toMatch(
          /reports no cache counts \(Ollama counts the whole prompt/,
        );
        expect(check(path, "unload").detail).toMatch(/stays loaded (2\d\d|300) s after a request/);
      },
      SLOW,
    );

    it(
      "a short keep_alive: the model is unloaded between two turns, and the doctor names OLLAMA_KEEP_ALIVE",
      async () => {
        const { path, text } = await doctor(kind, { ctx: 2048, keepAlive: "20s" }, (t) => [
          ...native(t),
          "--context-window",
          "4096",
        ]);
        const unload = check(path, "unload");
        expect(unload.ok).toBe(false);
        expect(unload.detail).toMatch(
          /unloads the model 1\d s after each request|unloads the model 20 s after each request/,
        );
        expect(unload.fix).toMatch(/OLLAMA_KEEP_ALIVE=30m/);
        expect(text).toMatch(/unload\s+no/);
      },
      SLOW,
    );

    it("its /v1 ignores num_ctx: the canary comes back cut, and the doctor names keel's native API", async () => {
      // Ollama's /v1 lists its models by their full tag
      const { path } = await doctor(
        kind,
        { ctx: 1024 },
        (t) => ["--provider", "openai", "--base-url", `${t.url}/v1`, "--context-window", "4096"],
        (t) => `${t.model}:latest`,
      );
      const window = check(path, "window");
      expect(window.ok).toBe(false);
      expect(window.detail).toMatch(
        /the server counted (\d+) tokens of a prompt keel estimated at (\d+): it cut the prompt without saying so \(Ollama's \/v1 ignores num_ctx/,
      );
      const [, counted] = /counted (\d+)/.exec(window.detail)!;
      expect(Number(counted)).toBeLessThanOrEqual(1024);
      expect(window.fix).toMatch(/--provider ollama --ollama-url/);
      expect(window.fix).toMatch(/OLLAMA_CONTEXT_LENGTH=4096/);
    });
  });
}
