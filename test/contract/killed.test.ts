/**
 * A server that dies mid-stream, on the fakes and the real servers alike: the client has the
 * chunks sent so far, then the connection ends with an error — no finish chunk, no `[DONE]`, no
 * `done: true`. (keel's own handling of this is tested against the fakes in test/graph/.)
 */
import { afterEach, describe, expect, it } from "vitest";
import { ollamaTargets, openaiTargets, type Target } from "./targets.js";
import { stream } from "./wire.js";

const user = [{ role: "user", content: "Talk for a long time." }];
let running: Target | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

for (const kind of openaiTargets()) {
  describe(kind.name, () => {
    it("killed mid-stream: the chunks so far, then an error; no finish_reason, no [DONE]", async () => {
      const t = (running = await kind.start({ ctx: 4096 }));
      const s = await stream(
        `${t.url}/v1/chat/completions`,
        {
          model: t.model,
          messages: user,
          stream: true,
          max_tokens: 2000,
          ...t.steer({ ramble: true }),
        },
        {},
        async (_chunk, i) => {
          if (i === 2) await t.kill();
        },
      );
      expect(s.status).toBe(200);
      expect(s.chunks.length).toBeGreaterThanOrEqual(3);
      expect(s.error).toBeInstanceOf(Error);
      expect(s.done).toBe(false);
      expect(s.chunks.some((c) => c.choices?.[0]?.finish_reason)).toBe(false);
    });
  });
}

for (const kind of ollamaTargets()) {
  describe(kind.name, () => {
    it("killed mid-stream: the lines so far, then an error; no done: true", async () => {
      const t = (running = await kind.start({ ctx: 4096 }));
      const s = await stream(
        `${t.url}/api/chat`,
        {
          model: t.model,
          messages: user,
          options: { num_predict: 2000 },
          ...t.steer({ ramble: true }),
        },
        {},
        async (_chunk, i) => {
          if (i === 2) await t.kill();
        },
      );
      expect(s.status).toBe(200);
      expect(s.chunks.length).toBeGreaterThanOrEqual(3);
      expect(s.error).toBeInstanceOf(Error);
      expect(s.chunks.some((c) => c.done === true)).toBe(false);
    });
  });
}
