/** The OpenAI-compatible servers' quirks as data: their error texts → kind and fix; which server it is. */
import { describe, expect, it } from "vitest";
import { classifyModelError, ModelServerError } from "../../../../src/models/errors.js";
import { QUIRKS, serverKindOf, SERVER_KINDS } from "../../../../src/models/openai/quirks.js";

/** An error as the openai SDK throws it: `status` and the server's message. */
const sdkError = (status: number, message: string) =>
  Object.assign(new Error(`${status} ${message}`), { status });

describe("server error texts", () => {
  it.each([
    [500, "tools param requires --jinja flag", "no_tools", /--jinja/],
    [
      400,
      '{"object":"error","message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"}',
      "no_tools",
      /--enable-auto-tool-choice --tool-call-parser/,
    ],
    [400, "the request exceeds the available context size, try increasing it", "truncated", /-c/],
    [
      400,
      "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
      "truncated",
      /--max-model-len/,
    ],
    [400, "JSON schema conversion failed: pattern not supported", "schema", /--tool-mode prompt/],
    [
      400,
      "Unable to generate parser for this template. Automatic parser generation failed: x",
      "schema",
      /grammar/,
    ],
  ] as const)("%i %s → %s with the fix", (status, message, kind, fix) => {
    const c = classifyModelError(sdkError(status, message));
    expect(c.kind).toBe(kind);
    expect(c.retryable).toBe(false);
    expect(c.fix).toMatch(fix);
  });

  it("401 and 403 are auth errors, named with --api-key and OPENAI_API_KEY", () => {
    for (const status of [401, 403]) {
      const c = classifyModelError(sdkError(status, "Invalid API Key"));
      expect(c).toMatchObject({ kind: "auth", retryable: false });
      const e = new ModelServerError(c.kind, "http://h:8080/v1", "m", c.message, 1, {
        provider: "openai",
      });
      expect(e.message).toMatch(/--api-key or OPENAI_API_KEY/);
      expect(e.message).not.toMatch(/bad_request/);
    }
  });

  it("an over-context refusal's numbers: llama.cpp's body and message, vLLM's message", () => {
    const body = Object.assign(sdkError(400, "request exceeds the available context size"), {
      error: { type: "exceed_context_size_error", n_prompt_tokens: 3053, n_ctx: 512 },
    });
    expect(classifyModelError(body).context).toEqual({ prompt: 3053, window: 512 });
    const llama = sdkError(
      400,
      "request (1071 tokens) exceeds the available context size (1024 tokens), try increasing it",
    );
    expect(classifyModelError(llama)).toMatchObject({
      kind: "truncated",
      context: { prompt: 1071, window: 1024 },
    });
    const vllm = sdkError(
      400,
      "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
    );
    expect(classifyModelError(vllm).context).toEqual({ prompt: 9000, window: 8192 });
  });

  it("the openai SDK's connection error is an unreachable server; 429 and 503 are retried", () => {
    expect(classifyModelError(new Error("Connection error.")).kind).toBe("unreachable");
    expect(classifyModelError(sdkError(429, "Too many requests"))).toMatchObject({
      kind: "overloaded",
      retryable: true,
    });
    expect(classifyModelError(sdkError(503, "Loading model"))).toMatchObject({
      kind: "overloaded",
      retryable: true,
    });
  });

  it("the error people read names the OpenAI-compatible server and the server's fix", () => {
    const e = new ModelServerError(
      "no_tools",
      "http://h:8080/v1",
      "m",
      "tools param requires --jinja flag",
      1,
      {
        provider: "openai",
        fix: "start llama-server with --jinja",
      },
    );
    expect(e.message).toMatch(
      /^the OpenAI-compatible server at http:\/\/h:8080\/v1 failed \(no_tools\).*Start llama-server with --jinja\.$/,
    );
    const down = new ModelServerError(
      "unreachable",
      "http://h:8080/v1",
      "m",
      "Connection error.",
      3,
      { provider: "openai" },
    );
    expect(down.message).toMatch(/--base-url/);
    expect(down.message).not.toMatch(/ollama/i);
  });
});

describe("serverKindOf", () => {
  it.each([
    [{ props: true, modelId: "x" }, "llama.cpp"],
    [{ lmstudioApi: true, modelId: "x" }, "lmstudio"],
    [{ maxModelLen: true, modelId: "Qwen/Qwen3-8B" }, "vllm"],
    [{ modelId: "mlx-community/Qwen3-8B-4bit" }, "mlx"],
    [{ modelId: "gpt-oss-20b" }, "generic"],
  ] as const)("%j → %s", (seen, kind) => {
    expect(serverKindOf(seen)).toBe(kind);
  });
  it("every server has a start command and a request profile", () => {
    for (const k of SERVER_KINDS) expect(QUIRKS[k].start.length).toBeGreaterThan(10);
  });
});
