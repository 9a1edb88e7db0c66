/** The server's own tokenizer as keel's token counter: llama.cpp's and vLLM's /tokenize, and none elsewhere. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { serverTokenCounter } from "../../../src/models/token-count.js";

/** A loopback server answering POST /tokenize as `reply` says; records the bodies it got. */
async function tokenizeServer(reply: (body: Record<string, unknown>) => [number, unknown]) {
  const bodies: Array<{ path: string; body: Record<string, unknown>; auth?: string }> = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString()));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      bodies.push({ path: req.url ?? "", body, auth: req.headers.authorization });
      const [status, json] = req.url === "/tokenize" ? reply(body) : [404, { error: "nope" }];
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  servers.push(server);
  return { baseUrl: `http://127.0.0.1:${port}/v1`, bodies };
}
const servers: Server[] = [];

describe("serverTokenCounter: the server's own tokenizer", () => {
  it("llama.cpp: POST /tokenize {content} at the server's root, the tokens counted", async () => {
    const s = await tokenizeServer((b) => [
      200,
      { tokens: Array.from({ length: String(b.content).length }, (_, i) => i) },
    ]);
    const count = serverTokenCounter({
      provider: "openai",
      server: "llama.cpp",
      baseUrl: s.baseUrl,
      model: "m",
      apiKey: "k",
    })!;
    expect(await count("你好世界")).toBe(4);
    expect(s.bodies).toEqual([
      { path: "/tokenize", body: { content: "你好世界", add_special: false }, auth: "Bearer k" },
    ]);
  });

  it("vLLM: POST /tokenize {model, prompt}, its count", async () => {
    const s = await tokenizeServer(() => [200, { count: 7, max_model_len: 4096, tokens: [1, 2] }]);
    const count = serverTokenCounter({
      provider: "openai",
      server: "vllm",
      baseUrl: s.baseUrl,
      model: "qwen",
    })!;
    expect(await count("some text")).toBe(7);
    expect(s.bodies[0]!.body).toEqual({
      model: "qwen",
      prompt: "some text",
      add_special_tokens: false,
    });
  });

  it("a server that fails or answers nonsense gives no count, and never throws", async () => {
    const s = await tokenizeServer(() => [500, { error: "boom" }]);
    expect(
      await serverTokenCounter({
        provider: "openai",
        server: "llama.cpp",
        baseUrl: s.baseUrl,
        model: "m",
      })!("x"),
    ).toBeUndefined();
    const t = await tokenizeServer(() => [200, { nothing: true }]);
    expect(
      await serverTokenCounter({
        provider: "openai",
        server: "vllm",
        baseUrl: t.baseUrl,
        model: "m",
      })!("x"),
    ).toBeUndefined();
    const down = serverTokenCounter({
      provider: "openai",
      server: "llama.cpp",
      baseUrl: "http://127.0.0.1:9/v1",
      model: "m",
    })!;
    expect(await down("x")).toBeUndefined();
  });

  it("servers without a tokenize endpoint get no counter: Ollama, LM Studio, MLX, unknown", () => {
    expect(
      serverTokenCounter({ provider: "ollama", baseUrl: "http://x/v1", model: "m" }),
    ).toBeUndefined();
    for (const server of ["lmstudio", "mlx", "generic"] as const)
      expect(
        serverTokenCounter({ provider: "openai", server, baseUrl: "http://x/v1", model: "m" }),
      ).toBeUndefined();
  });
});
