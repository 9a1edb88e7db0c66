/**
 * The contract of an OpenAI-compatible llama-server as keel reads it, run on the fake and on the
 * real server alike (test/contract/targets.ts): discovery endpoints, auth, token counts, streaming
 * and usage, cache counters, tool calls through the server's parser and through keel's prompt mode,
 * cut replies, over-length prompts and wrong types. One server per target for the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseToolCalls } from "../../src/models/tool-calls/index.js";
import { DENSITY, SAMPLES } from "./samples.js";
import { callText, openaiTargets, withPrefill, type Target } from "./targets.js";
import { call, stream } from "./wire.js";

const CTX = 2048;
const KEY = "contract-key";
const auth = { Authorization: `Bearer ${KEY}` };
/** A tool whose schema admits one call only, so a real model under a grammar can only make it. */
const READ_FILE = {
  type: "function",
  function: {
    name: "read_file",
    description: "Read a file of the workspace.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", enum: ["src/a.ts"] } },
      required: ["path"],
      additionalProperties: false,
    },
  },
};
const user = (content: string) => [{ role: "user", content }];

for (const kind of openaiTargets()) {
  describe(`${kind.name}: the OpenAI-compatible wire`, () => {
    let t: Target;
    const chat = (body: Record<string, unknown>, headers: Record<string, string> = auth) =>
      call(`${t.url}/v1/chat/completions`, withPrefill({ model: t.model, ...body }), headers);
    const tokens = async (content: string) =>
      (await call(`${t.url}/tokenize`, { content }, auth)).body.tokens.length as number;
    /** Tokens of the prompt `messages` render to, by the server's own template and tokenizer. */
    const promptTokens = async (messages: unknown[], tools?: unknown[]) => {
      const applied = await call(
        `${t.url}/apply-template`,
        { messages, ...(tools ? { tools } : {}) },
        auth,
      );
      return tokens(applied.body.prompt as string);
    };
    /** A user message that makes the prompt exactly `n` tokens long (" x" is one token). */
    const promptOf = async (n: number) => {
      const base = await promptTokens(user("x"));
      const messages = user(`x${" x".repeat(n - base)}`);
      expect(await promptTokens(messages)).toBe(n);
      return messages;
    };

    beforeAll(async () => {
      t = await kind.start({ ctx: CTX, apiKey: KEY });
    });
    afterAll(async () => t?.close());

    it("GET /health answers ok, without the API key", async () => {
      expect(await call(`${t.url}/health`)).toEqual({ status: 200, body: { status: "ok" } });
    });

    it("every other route wants the key: 401 authentication_error", async () => {
      const without: Record<string, string>[] = [{}, { Authorization: "Bearer wrong" }];
      for (const headers of without) {
        const a = await call(`${t.url}/v1/models`, undefined, headers);
        expect(a.status).toBe(401);
        expect(a.body.error).toMatchObject({
          code: 401,
          type: "authentication_error",
          message: "Invalid API Key",
        });
      }
    });

    it("an unknown route is a 404 not_found_error", async () => {
      const a = await call(`${t.url}/v1/nothing-here`, undefined, auth);
      expect(a.status).toBe(404);
      expect(a.body.error).toMatchObject({ code: 404, type: "not_found_error" });
    });

    it("/v1/models lists the one file it serves; /props gives the slot's context and template", async () => {
      const models = await call(`${t.url}/v1/models`, undefined, auth);
      expect(models.body.data).toHaveLength(1);
      expect(models.body.data[0]).toMatchObject({ object: "model", owned_by: "llamacpp" });
      expect(models.body.data[0].id).toMatch(/\.gguf$/);
      const props = await call(`${t.url}/props`, undefined, auth);
      expect(props.body.default_generation_settings.n_ctx).toBe(CTX);
      expect(props.body.total_slots).toBe(4);
      expect(props.body.chat_template).toContain("<tool_call>");
      expect(props.body.chat_template_caps.supports_tool_calls).toBe(true);
    });

    it("/tokenize counts tokens at the real densities (English, TypeScript, JSON, Chinese)", async () => {
      for (const [script, text] of Object.entries(SAMPLES)) {
        const perToken = text.length / (await tokens(text));
        const want = DENSITY[script as keyof typeof DENSITY];
        expect(perToken, script).toBeGreaterThan(want * 0.88);
        expect(perToken, script).toBeLessThan(want * 1.12);
      }
    });

    it("usage.prompt_tokens is the /apply-template prompt's /tokenize count; any model name is answered", async () => {
      const messages = user("Say hello.");
      const a = await chat({
        model: "no-such-model",
        messages,
        max_tokens: 1,
        ...t.steer({ text: "Hi" }),
      });
      expect(a.status).toBe(200);
      // the reply names the model served, not the one asked for
      expect(a.body.model).toBe(
        (await call(`${t.url}/v1/models`, undefined, auth)).body.data[0].id,
      );
      expect(a.body.usage.prompt_tokens).toBe(await promptTokens(messages));
    });

    it("streams with include_usage: a last chunk with no choices carries usage (cached_tokens) and timings (cache_n)", async () => {
      const s = await stream(
        `${t.url}/v1/chat/completions`,
        {
          model: t.model,
          messages: user("Stream a short greeting, please."),
          stream: true,
          stream_options: { include_usage: true },
          max_tokens: 4,
          ...t.steer({ text: "Hello there" }),
        },
        auth,
      );
      expect(s.done).toBe(true);
      const last = s.chunks.at(-1);
      expect(last.choices).toEqual([]);
      expect(last.usage).toMatchObject({
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        prompt_tokens_details: { cached_tokens: expect.any(Number) },
      });
      expect(last.timings).toMatchObject({
        cache_n: last.usage.prompt_tokens_details.cached_tokens,
      });
      expect(s.chunks.filter((c) => c.usage)).toHaveLength(1);
    });

    it("streams without include_usage: no usage, timings on the finish chunk", async () => {
      const s = await stream(
        `${t.url}/v1/chat/completions`,
        {
          model: t.model,
          messages: user("Another greeting."),
          stream: true,
          max_tokens: 4,
          ...t.steer({ text: "Hey" }),
        },
        auth,
      );
      expect(s.chunks.some((c) => c.usage)).toBe(false);
      const finish = s.chunks.find((c) => c.choices[0]?.finish_reason);
      expect(finish.timings).toMatchObject({
        cache_n: expect.any(Number),
        prompt_n: expect.any(Number),
      });
    });

    it("the same prompt again comes from the cache, all but one token: cached_tokens = timings.cache_n", async () => {
      const messages = user(`Cache me: ${SAMPLES.english}`);
      const first = await chat({ messages, max_tokens: 1, ...t.steer({ text: "A" }) });
      const again = await chat({ messages, max_tokens: 1, ...t.steer({ text: "A" }) });
      const n = first.body.usage.prompt_tokens as number;
      expect(again.body.usage.prompt_tokens_details.cached_tokens).toBe(n - 1);
      expect(again.body.timings).toMatchObject({ cache_n: n - 1, prompt_n: 1 });
    });

    it("max_tokens cuts a reply: finish_reason length, completion_tokens = max_tokens", async () => {
      const a = await chat({
        messages: user("Talk."),
        max_tokens: 7,
        ...t.steer({ ramble: true }),
      });
      expect(a.body.choices[0].finish_reason).toBe("length");
      expect(a.body.usage.completion_tokens).toBe(7);
    });

    it("the context cuts a reply with no max_tokens: it stops where the slot is full", async () => {
      const messages = await promptOf(CTX - 5);
      const a = await chat({ messages, ...t.steer({ ramble: true }) });
      expect(a.body.choices[0].finish_reason).toBe("length");
      expect(a.body.usage.completion_tokens).toBe(5);
    });

    it("a prompt of n_ctx tokens is refused (>=, not >) with exceed_context_size_error; n_ctx - 1 is answered", async () => {
      const full = await chat({ messages: await promptOf(CTX), max_tokens: 1 });
      expect(full.status).toBe(400);
      expect(full.body.error).toMatchObject({
        code: 400,
        type: "exceed_context_size_error",
        n_prompt_tokens: CTX,
        n_ctx: CTX,
        message: `request (${CTX} tokens) exceeds the available context size (${CTX} tokens), try increasing it`,
      });
      const fits = await chat({
        messages: await promptOf(CTX - 1),
        max_tokens: 1,
        ...t.steer({ text: "A" }),
      });
      expect(fits.status).toBe(200);
    });

    it("an over-length prompt is refused the same way when streaming", async () => {
      const messages = user(SAMPLES.english.repeat(20));
      const a = await call(
        `${t.url}/v1/chat/completions`,
        { model: t.model, messages, stream: true },
        auth,
      );
      expect(a.status).toBe(400);
      expect(a.body.error.type).toBe("exceed_context_size_error");
      expect(a.body.error.n_prompt_tokens).toBeGreaterThan(CTX);
    });

    it('a native tool call through the server\'s parser: 32-character id, content "", finish tool_calls', async () => {
      const a = await chat({
        messages: user("Read src/a.ts."),
        tools: [READ_FILE],
        max_tokens: 40,
        ...t.steer({ call: { name: "read_file", arguments: { path: "src/a.ts" } } }),
      });
      const choice = a.body.choices[0];
      expect(choice.finish_reason).toBe("tool_calls");
      expect(choice.message.content).toBe("");
      expect(choice.message.tool_calls).toHaveLength(1);
      const c = choice.message.tool_calls[0];
      expect(c.id).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(c.function.name).toBe("read_file");
      expect(JSON.parse(c.function.arguments as string)).toEqual({ path: "src/a.ts" });
    });

    it("a tool call cut by max_tokens comes back with finish length and the arguments so far, not JSON", async () => {
      const a = await chat({
        messages: user("Read src/a.ts."),
        tools: [READ_FILE],
        max_tokens: 100,
        ...t.steer({ cutCall: { name: "read_file", arguments: { path: "src/a.ts" } } }),
      });
      const choice = a.body.choices[0];
      expect(choice.finish_reason).toBe("length");
      const cut = choice.message.tool_calls[0].function as { name: string; arguments: string };
      expect(cut.name).toBe("read_file");
      expect(cut.arguments).toMatch(/^\{"path": "src/);
      expect(() => JSON.parse(cut.arguments) as unknown).toThrow();
    });

    it("keel's prompt mode: with no tools the call comes as text, and keel's parser reads it", async () => {
      const text = callText({ name: "read_file", arguments: { path: "src/a.ts" } });
      const a = await chat({
        messages: user("Read src/a.ts."),
        max_tokens: 40,
        ...t.steer({ text, prefill: true }),
      });
      expect(a.body.choices[0].message.content).toBe(text);
      expect(
        parseToolCalls(a.body.choices[0].message.content as string, { toolNames: ["read_file"] })
          .calls,
      ).toEqual([{ name: "read_file", arguments: { path: "src/a.ts" } }]);
    });

    it("wrong types: a string max_tokens is a 400 naming the field; a body that is not JSON a 500; unknown fields are ignored", async () => {
      const wrong = await chat({ messages: user("x"), max_tokens: "5" });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.type).toBe("invalid_request_error");
      expect(wrong.body.error.message).toMatch(/^Field 'max_tokens'/);
      const garbled = await call(`${t.url}/v1/chat/completions`, "{not json", auth);
      expect(garbled.status).toBe(500);
      const extra = await chat({
        messages: user("x"),
        max_tokens: 1,
        no_such_field: [1, 2],
        ...t.steer({ text: "A" }),
      });
      expect(extra.status).toBe(200);
    });
  });
}
