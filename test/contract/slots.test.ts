/**
 * llama-server's slots, on the fake and the real server alike: 4 slots sharing one KV cache (the
 * default), and a prompt cache in RAM that keeps what the slots gave up; a request goes to the slot
 * sharing the longest prefix with it when that prefix is more than 10% of the prompt, otherwise
 * to the least recently used slot, which loads the cached prompt that best matches. A request that
 * names its slot (`id_slot`) gets it as it is: on the default slots, empty — keel sends none.
 * Cache reuse is read from the server's own counters (usage.prompt_tokens_details.cached_tokens).
 * With `n_cache_reuse`, runs of the slot's cache found further on are shifted into place (keel's
 * `cacheReuse` folds count on it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLES } from "./samples.js";
import { openaiTargets, type Target } from "./targets.js";
import { call, stream } from "./wire.js";

const conversation = (system: string, question: string) => [
  { role: "system", content: system },
  { role: "user", content: question },
];
const A = conversation(`You review code.\n${SAMPLES.english}`, "First question?");
const B = conversation(
  `You translate.\n${SAMPLES.chinese}\n${SAMPLES.typescript}`,
  "Second question?",
);

/** One reply of one token ("A"): the server's usage of the prompt. */
async function usageOf(t: Target, messages: unknown[], extra: Record<string, unknown>) {
  const a = await call(`${t.url}/v1/chat/completions`, {
    model: t.model,
    messages,
    max_tokens: 1,
    ...extra,
    ...t.steer({ text: "A" }),
  });
  expect(a.status).toBe(200);
  return a.body.usage as {
    prompt_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
}

for (const kind of openaiTargets()) {
  describe(`${kind.name}: slots`, () => {
    let t: Target;
    const ask = (messages: unknown[], extra: Record<string, unknown> = {}) =>
      usageOf(t, messages, extra);
    beforeAll(async () => {
      t = await kind.start({ ctx: 2048 });
    });
    afterAll(async () => t?.close());

    it("a second conversation does not evict the first: the server keeps it", async () => {
      expect((await ask(A)).prompt_tokens_details.cached_tokens).toBe(0);
      expect((await ask(B)).prompt_tokens_details.cached_tokens).toBe(0);
      const again = await ask(A);
      expect(again.prompt_tokens_details.cached_tokens).toBe(again.prompt_tokens - 1);
      const slots = await call(`${t.url}/slots`);
      expect(slots.body).toHaveLength(4);
    });

    it("more conversations than slots: each comes back from the prompt cache in RAM", async () => {
      const many = Array.from({ length: 6 }, (_, i) =>
        conversation(`${"ABCDEF"[i]!.repeat(3)} reviews.\n${SAMPLES.english}`, `Question ${i}?`),
      );
      for (const c of many) expect((await ask(c)).prompt_tokens_details.cached_tokens).toBe(0);
      for (const c of many) {
        const again = await ask(c);
        expect(again.prompt_tokens_details.cached_tokens).toBe(again.prompt_tokens - 1);
      }
    });

    it("id_slot on the server's default slots (one KV cache): the slot was cleared when another conversation started, and asked for by id it loads nothing back", async () => {
      const C = conversation(`You pin.\n${SAMPLES.typescript}`, "Third question?");
      const D = conversation(`You unpin.\n${SAMPLES.json}`, "Fourth question?");
      expect((await ask(C, { id_slot: 0 })).prompt_tokens_details.cached_tokens).toBe(0);
      await ask(D, { id_slot: 1 });
      expect((await ask(C, { id_slot: 0 })).prompt_tokens_details.cached_tokens).toBe(0);
      // not asked for a slot, the server finds it in its prompt cache
      const free = await ask(C);
      expect(free.prompt_tokens_details.cached_tokens).toBe(free.prompt_tokens - 1);
    });

    it("a prompt sharing more than 10% with a slot reuses that slot's prefix", async () => {
      const followUp = await ask([
        ...A,
        { role: "assistant", content: "A" },
        { role: "user", content: "And?" },
      ]);
      expect(followUp.prompt_tokens_details.cached_tokens).toBeGreaterThan(
        followUp.prompt_tokens * 0.8,
      );
    });

    it("a prompt sharing less than 10% goes to another slot and reuses nothing", async () => {
      const long = conversation("You review code.", `${SAMPLES.english}\n${SAMPLES.english}`);
      expect((await ask(long)).prompt_tokens_details.cached_tokens).toBe(0);
    });

    it("n_cache_reuse: with the middle of the slot's prompt left out, the rest is shifted into place from the cache; without it, only the shared prefix", async () => {
      const tail = [
        { role: "user", content: `${SAMPLES.chinese}\n${SAMPLES.json}\n${SAMPLES.chinese}` },
        { role: "assistant", content: "A" },
        { role: "user", content: `${SAMPLES.json}\nWhich?` },
      ];
      for (const reuse of [32, 0]) {
        const head = {
          role: "system",
          content: `You summarise (${reuse}).\n${SAMPLES.english}\n${SAMPLES.english}`,
        };
        const middle = [
          { role: "user", content: `${SAMPLES.typescript}\n${SAMPLES.typescript}` },
          { role: "assistant", content: "A" },
        ];
        await ask([head, ...middle, ...tail]);
        const folded = await ask([head, ...tail], reuse ? { n_cache_reuse: reuse } : {});
        const share = folded.prompt_tokens_details.cached_tokens / folded.prompt_tokens;
        if (reuse) expect(share).toBeGreaterThan(0.8);
        else expect(share).toBeLessThan(0.5);
      }
    });
  });

  describe(`${kind.name}: -np 4, slots splitting the context`, () => {
    let t: Target;
    const ask = (messages: unknown[], extra: Record<string, unknown> = {}) =>
      usageOf(t, messages, extra);
    beforeAll(async () => {
      t = await kind.start({ ctx: 8192, slots: 4 });
    });
    afterAll(async () => t?.close());

    it("idle slots are copied to the prompt cache, not cleared: a conversation asked of another's slot comes back from its copy", async () => {
      const E = conversation(`You plan.\n${SAMPLES.english}`, "Fifth question?");
      const F = conversation(`You test.\n${SAMPLES.typescript}`, "Sixth question?");
      await ask(E);
      await ask(F);
      // E went to the last slot (3), F to the last of the least recently used (2)
      const followUp = [
        ...E,
        { role: "assistant", content: "A" },
        { role: "user", content: "And?" },
      ];
      const again = await ask(followUp, { id_slot: 2 });
      expect(again.prompt_tokens_details.cached_tokens).toBeGreaterThan(again.prompt_tokens * 0.8);
    });
  });

  describe(`${kind.name}: one KV cache, requests in flight together`, () => {
    let t: Target;
    beforeAll(async () => {
      t = await kind.start({ ctx: 2048 });
    });
    afterAll(async () => t?.close());

    it("two prompts that do not fit the context together: refused (streamed: an error event in a 200 answer); each alone is answered", async () => {
      // about 1,400 tokens each (the samples' English: 4.6 characters a token on both)
      const long = (i: number) =>
        conversation(`Reader ${i}.\n${SAMPLES.english.repeat(10)}`, "Which?");
      const send = (i: number) =>
        stream(`${t.url}/v1/chat/completions`, {
          model: t.model,
          messages: long(i),
          // a reply of 100 tokens keeps the first in flight while the second arrives
          max_tokens: 100,
          stream: true,
          ...t.steer({ ramble: true }),
        });
      const together = await Promise.all([send(1), send(2)]);
      // the one that found no room, or both when their prompts met in one batch
      const refused = together.filter((s) => s.chunks.some((c) => c.error));
      expect(refused.length).toBeGreaterThanOrEqual(1);
      for (const s of refused) {
        expect(s.status).toBe(200);
        expect(s.chunks.find((c) => c.error)).toMatchObject({
          error: { code: 500, message: "Context size has been exceeded.", type: "server_error" },
        });
      }
      for (const i of [1, 2]) {
        const alone = await send(i);
        expect(alone.chunks.some((c) => c.error)).toBe(false);
        expect(alone.done).toBe(true);
      }
    });
  });
}
