/**
 * What `keel doctor`'s checks and `keel calibrate` read from a server, held by the fakes as the
 * real llama-server and Ollama do it: llama-server's `cache_prompt: false` and its build and file
 * in `/props` and `/v1/models`; Ollama's keep_alive as `/api/ps` shows it, its digests in
 * `/api/tags`, and its `/v1`, which runs in the server's default context whatever num_ctx says.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canaryPrompt } from "../../src/models/canary.js";
import { ollamaTargets, openaiTargets, type Target } from "./targets.js";
import { call } from "./wire.js";

for (const kind of openaiTargets()) {
  describe(`${kind.name}: what the path checks read`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await kind.start({ ctx: 4096 });
    });
    afterAll(async () => t?.close());
    const chat = (content: string, extra: Record<string, unknown> = {}) =>
      call(`${t.url}/v1/chat/completions`, {
        messages: [{ role: "user", content }],
        max_tokens: 1,
        temperature: 0,
        ...extra,
      });

    it("cache_prompt false: nothing of a known prefix is taken from the cache; the next request still finds it", async () => {
      const base = canaryPrompt("KEEL-CONTRACT", 600);
      await chat(`${base}\nOne.`);
      const off = await chat(`${base}\nTwo.`, { cache_prompt: false });
      expect(off.body.usage.prompt_tokens_details.cached_tokens).toBe(0);
      expect(off.body.timings.cache_n).toBe(0);
      const on = await chat(`${base}\nThree.`);
      expect(on.body.usage.prompt_tokens_details.cached_tokens).toBeGreaterThan(500);
    });

    it("/props names the build and the file; /v1/models gives the file's size, parameters and type", async () => {
      const props = await call(`${t.url}/props`);
      expect(props.body.build_info).toMatch(/^b\d+-/);
      expect(typeof props.body.model_path).toBe("string");
      const models = await call(`${t.url}/v1/models`);
      expect(models.body.data[0].meta).toMatchObject({
        n_params: expect.any(Number),
        size: expect.any(Number),
        ftype: expect.any(String),
      });
    });
  });
}

for (const kind of ollamaTargets()) {
  describe(`${kind.name}: what the path checks read`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await kind.start({ ctx: 1024 });
    });
    afterAll(async () => t?.close());
    const native = (extra: Record<string, unknown>) =>
      call(`${t.url}/api/chat`, {
        model: t.model,
        stream: false,
        messages: [{ role: "user", content: "Hi." }],
        options: { num_predict: 1, num_ctx: 1024 },
        ...extra,
      });
    const ps = async () =>
      (await call(`${t.url}/api/ps`)).body.models as Array<{ name: string; expires_at: string }>;

    it("keep_alive: /api/ps lists the model until the request's keep_alive runs out; 0 unloads it at once", async () => {
      await native({ keep_alive: "40s" });
      const [loaded] = await ps();
      expect(loaded!.name).toBe("tiny-qwen2:latest");
      const left = (Date.parse(loaded!.expires_at) - Date.now()) / 1000;
      expect(left).toBeGreaterThan(30);
      expect(left).toBeLessThanOrEqual(40);
      await native({ keep_alive: 0 });
      // the real server unloads in the background, a moment after the answer
      let gone = false;
      for (let i = 0; i < 50 && !gone; i++) {
        gone = (await ps()).length === 0;
        if (!gone) await new Promise((r) => setTimeout(r, 100));
      }
      expect(gone).toBe(true);
    });

    it("/api/tags gives each model's digest (sha256, 64 hex)", async () => {
      const tags = await call(`${t.url}/api/tags`);
      const entry = (tags.body.models as Array<{ name: string; digest: string }>).find(
        (m) => m.name === "tiny-qwen2:latest",
      );
      expect(entry!.digest).toMatch(/^[0-9a-f]{64}$/);
    });

    it("/v1 takes no num_ctx: a prompt over the default context is cut at its front and answered", async () => {
      const long = canaryPrompt("KEEL-V1", 3000);
      const r = await call(`${t.url}/v1/chat/completions`, {
        model: `${t.model}:latest`,
        messages: [{ role: "user", content: long }],
        max_tokens: 1,
        options: { num_ctx: 8192 },
      });
      expect(r.status).toBe(200);
      expect(r.body.usage.prompt_tokens).toBeLessThanOrEqual(1024);
      expect(r.body.usage.prompt_tokens).toBeGreaterThan(900);
    });
  });
}
