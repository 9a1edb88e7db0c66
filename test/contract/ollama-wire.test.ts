/**
 * The contract of Ollama's native API as keel reads it (`/`, `/api/version`, `/api/tags`,
 * `/api/show`, `/api/chat`), run on the fake Ollama and on a real Ollama alike: streamed lines and
 * their counters, cut replies, an over-length prompt (Ollama cuts it unless asked not to, as keel
 * asks: then it refuses it), a reply stopped at the window instead of shifted, tool
 * calls, missing models and wrong types. One server per target for the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAMPLES } from "./samples.js";
import { ollamaTargets, type Target } from "./targets.js";
import { call, stream } from "./wire.js";

const NUM_CTX = 1024;
const READ_FILE = {
  type: "function",
  function: {
    name: "read_file",
    description: "Read a file of the workspace.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", enum: ["src/a.ts"] } },
      required: ["path"],
    },
  },
};
const user = (content: string) => [{ role: "user", content }];

for (const kind of ollamaTargets()) {
  describe(`${kind.name}: Ollama's native API`, () => {
    let t: Target;
    const chat = (body: Record<string, unknown>) =>
      call(`${t.url}/api/chat`, { model: t.model, stream: false, ...body });

    beforeAll(async () => {
      t = await kind.start({ ctx: NUM_CTX });
    });
    afterAll(async () => t?.close());

    it("/ says Ollama is running; /api/version gives a version", async () => {
      expect(await call(`${t.url}/`)).toEqual({ status: 200, body: "Ollama is running" });
      const v = await call(`${t.url}/api/version`);
      expect(v.body.version).toMatch(/^\d+\.\d+\.\d+/);
    });

    it("/api/tags lists the model with its tag, format and family", async () => {
      const tags = await call(`${t.url}/api/tags`);
      const models = tags.body.models as Array<{ name: string }>;
      const entry = models.find((m) => m.name === "tiny-qwen2:latest");
      expect(entry).toMatchObject({
        model: "tiny-qwen2:latest",
        details: { format: "gguf", family: "qwen2" },
      });
    });

    it("/api/show: capabilities with tools, the template, the architecture and trained context", async () => {
      const show = await call(`${t.url}/api/show`, { model: t.model });
      expect(show.status).toBe(200);
      expect(show.body.capabilities).toEqual(expect.arrayContaining(["completion", "tools"]));
      expect(show.body.template).toContain("<tool_call>");
      expect(show.body.details).toMatchObject({ format: "gguf", family: "qwen2" });
      expect(show.body.model_info).toMatchObject({
        "general.architecture": "qwen2",
        "qwen2.context_length": 131072,
      });
    });

    it("a model it does not have: 404 model '…' not found, from /api/show and /api/chat", async () => {
      for (const path of ["/api/show", "/api/chat"]) {
        const a = await call(`${t.url}${path}`, { model: "no-such-model", messages: user("x") });
        expect(a).toEqual({ status: 404, body: { error: "model 'no-such-model' not found" } });
      }
    });

    it("wrong types: messages not a list, a body that is not JSON, no model: 400 with Go's texts", async () => {
      const notList = await call(`${t.url}/api/chat`, { model: t.model, messages: "hi" });
      expect(notList.status).toBe(400);
      expect(notList.body.error).toMatch(
        /^json: cannot unmarshal string into Go struct field ChatRequest\.messages/,
      );
      const garbled = await call(`${t.url}/api/chat`, "{not json");
      expect(garbled).toEqual({
        status: 400,
        body: { error: "invalid character 'n' looking for beginning of object key string" },
      });
      const noModel = await call(`${t.url}/api/chat`, { messages: user("x") });
      expect(noModel).toEqual({ status: 400, body: { error: "model is required" } });
    });

    it("streams JSON lines; the last has done, done_reason and the counters", async () => {
      const s = await stream(`${t.url}/api/chat`, {
        model: t.model,
        messages: user("Say hello."),
        options: { num_predict: 4 },
        ...t.steer({ text: "Hello" }),
      });
      const last = s.chunks.at(-1);
      expect(last).toMatchObject({
        done: true,
        done_reason: expect.stringMatching(/^(stop|length)$/),
        prompt_eval_count: expect.any(Number),
        eval_count: expect.any(Number),
        total_duration: expect.any(Number),
      });
      expect(
        s.chunks.slice(0, -1).every((c) => c.done === false && c.message.role === "assistant"),
      ).toBe(true);
    });

    it("num_predict cuts a reply: done_reason length, eval_count = num_predict", async () => {
      const a = await chat({
        messages: user("Talk."),
        options: { num_predict: 6 },
        ...t.steer({ ramble: true }),
      });
      expect(a.body.done_reason).toBe("length");
      expect(a.body.eval_count).toBe(6);
    });

    it("an over-length prompt is answered, cut to the window: prompt_eval_count is num_ctx", async () => {
      const a = await chat({
        messages: user(SAMPLES.english.repeat(12)),
        options: { num_ctx: 512, num_predict: 1 },
        ...t.steer({ text: "A" }),
      });
      expect(a.status).toBe(200);
      expect(a.body.prompt_eval_count).toBe(512);
    });

    it.each([false, true])(
      "truncate: false: an over-length prompt is refused, 400 in Ollama's words (streamed: %s)",
      async (streamed) => {
        const a = await call(`${t.url}/api/chat`, {
          model: t.model,
          stream: streamed,
          messages: user(SAMPLES.english.repeat(12)),
          options: { num_ctx: 512, num_predict: 1 },
          truncate: false,
        });
        expect(a).toEqual({
          status: 400,
          body: { error: "the input length exceeds the context length" },
        });
      },
    );

    it("shift: false: a reply that reaches num_ctx stops there, done_reason length", async () => {
      const a = await chat({
        messages: user(SAMPLES.english.repeat(3)),
        options: { num_ctx: 512, num_predict: 2000 },
        shift: false,
        ...t.steer({ ramble: true }),
      });
      expect(a.status).toBe(200);
      expect(a.body.done_reason).toBe("length");
      // The token sampled when the window filled is counted too (measured on 0.24): num_ctx + 1.
      expect(Number(a.body.prompt_eval_count) + Number(a.body.eval_count)).toBe(513);
    });

    it("an earlier call (arguments as an object) and its result are taken into the prompt", async () => {
      const question = user("Read src/a.ts.");
      const bare = await chat({
        messages: question,
        tools: [READ_FILE],
        options: { num_predict: 1 },
        ...t.steer({ text: "A" }),
      });
      const withCall = await chat({
        messages: [
          ...question,
          {
            role: "assistant",
            content: "",
            tool_calls: [{ function: { name: "read_file", arguments: { path: "src/a.ts" } } }],
          },
          { role: "tool", tool_name: "read_file", content: "export const a = 1;" },
        ],
        tools: [READ_FILE],
        options: { num_predict: 1 },
        ...t.steer({ text: "A" }),
      });
      expect(withCall.status).toBe(200);
      expect(withCall.body.prompt_eval_count).toBeGreaterThan(
        (bare.body.prompt_eval_count as number) + 10,
      );
    });
  });
}
