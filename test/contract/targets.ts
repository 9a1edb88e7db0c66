/**
 * The servers the contract suite runs on: the fakes always; the real llama-server and Ollama when
 * `npm run real-servers` installed them (src/testing/real-servers.ts finds them). Every target is
 * started the same way and answers the same test bodies; `steer` is the only seam: it makes the
 * next reply what a test needs — the fake is given it as its next scripted reply, the real
 * server's tiny random model is made to produce it by request fields (a grammar, logit biases).
 */
import { readEnv, type RealServerPaths } from "../../src/env.js";
import { startFakeOllama } from "../../src/testing/fake-ollama/index.js";
import { keepAliveMs } from "../../src/testing/fake-ollama/residency.js";
import { startFakeOpenAI } from "../../src/testing/fake-openai/index.js";
import { pyJson } from "../../src/testing/fake-openai/llamacpp.js";
import { countTokens } from "../../src/testing/tokens.js";
import {
  locateRealServers,
  startLlamaServer,
  startOllama,
} from "../../src/testing/real-servers.js";

/** What a test wants the model to answer next. */
export type Want =
  /** Exactly this text (`prefill`: a long text, written by the real server as an assistant prefill). */
  | { text: string; prefill?: boolean }
  /** A call cut by max_tokens inside its arguments. */
  | { cutCall: { name: string; arguments: Record<string, unknown> } }
  | { call: { name: string; arguments: Record<string, unknown> } }
  /** Text that goes on until max_tokens stops it. */
  | { ramble: true };

export interface Target {
  name: string;
  real: boolean;
  /** The server's root. */
  url: string;
  /** The model name requests carry. */
  model: string;
  /** Request fields that make the next reply `want` (and, on a fake, queue it). */
  steer(want: Want): Record<string, unknown>;
  /** The server dies at once (SIGKILL, or the fake drops every connection). */
  kill(): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The context of one slot (llama-server) or num_ctx default (Ollama). */
  ctx: number;
  apiKey?: string;
  /** llama-server's `-np`: slots splitting `ctx` between them (default: the server's own, one KV cache). */
  slots?: number;
  /** llama-server started with `--no-jinja`: every request with tools fails. */
  noJinja?: boolean;
  /** llama-server started with `--no-cache-prompt`. */
  noCachePrompt?: boolean;
  /** Ollama's OLLAMA_KEEP_ALIVE (a Go duration such as "10s"). */
  keepAlive?: string;
}

export interface TargetKind {
  name: string;
  real: boolean;
  start(o: StartOptions): Promise<Target>;
}

const found: RealServerPaths = locateRealServers(readEnv().realServers);

/** The real half, when installed; undefined otherwise (and the reason). */
export const real = {
  llama:
    found.llamaServer && found.ggufs["tiny-qwen2"]
      ? { binary: found.llamaServer, gguf: found.ggufs["tiny-qwen2"] }
      : undefined,
  ollama:
    found.ollama && found.ollamaModels
      ? { binary: found.ollama, models: found.ollamaModels }
      : undefined,
};

/** The fakes' rambling reply: long, and sent a piece at a time as a generating server sends it. */
const RAMBLE = { content: "lorem ipsum dolor sit amet ".repeat(400), pieces: 400, paceMs: 2 };

/** A GBNF grammar that admits exactly `text`. */
export const exactly = (text: string) => `root ::= ${JSON.stringify(text)}`;

/** The tiny model's `<|im_end|>`: biased up, it ends the reply at once. */
const IM_END = 151645;

/** A call as Qwen2.5 writes it. */
export const callText = (c: { name: string; arguments: Record<string, unknown> }) =>
  `<tool_call>\n${pyJson({ name: c.name, arguments: c.arguments })}\n</tool_call>`;

/**
 * The request `body` with a steer's `prefill` turned into a trailing assistant message, which
 * llama-server continues (and parses, prefill included, as the reply).
 */
export function withPrefill(body: Record<string, unknown>): Record<string, unknown> {
  const { prefill, ...rest } = body;
  if (typeof prefill !== "string") return rest;
  const messages = [...(rest.messages as unknown[]), { role: "assistant", content: prefill }];
  return { ...rest, messages };
}

/** The fake's stand-in for the Qwen2.5 template llama-server reports in /props. */
const QWEN25_TEMPLATE =
  "{%- if tools %}<|im_start|>system\n# Tools\n<tools>{{ tools }}</tools>\nFor each function call, return <tool_call>{...}</tool_call>{%- endif %}";

const fakeLlama: TargetKind = {
  name: "fake llama.cpp",
  real: false,
  async start(o) {
    const fake = await startFakeOpenAI({
      models: {
        "tiny-qwen2.gguf": {
          contextLength: o.ctx / (o.slots ?? 1),
          tools: true,
          template: QWEN25_TEMPLATE,
        },
      },
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      ...(o.slots ? { slots: o.slots } : {}),
      ...(o.noJinja ? { requireJinja: true } : {}),
      ...(o.noCachePrompt ? { noCachePrompt: true } : {}),
    });
    return {
      name: this.name,
      real: false,
      url: fake.url,
      model: "tiny-qwen2.gguf",
      steer(want) {
        if ("text" in want) fake.inject({ content: want.text });
        else if ("call" in want) fake.inject({ content: "", toolCalls: [want.call] });
        else if ("cutCall" in want) {
          fake.inject({ content: "", toolCalls: [want.cutCall] });
          const head = callText(want.cutCall).indexOf('"arguments": ') + '"arguments": '.length;
          return { max_tokens: countTokens(callText(want.cutCall).slice(0, head)) + 5 };
        } else fake.inject(RAMBLE);
        return {};
      },
      kill: () => fake.close(),
      close: () => fake.close(),
    };
  },
};

const realLlama = (bin: { binary: string; gguf: string }): TargetKind => ({
  name: "llama-server",
  real: true,
  async start(o) {
    const server = await startLlamaServer({
      binary: bin.binary,
      gguf: bin.gguf,
      ctx: o.ctx,
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      ...(o.slots ? { slots: o.slots } : {}),
      args: [
        "--seed",
        "24",
        "--temp",
        "0",
        ...(o.noJinja ? ["--no-jinja"] : []),
        ...(o.noCachePrompt ? ["--no-cache-prompt"] : []),
      ],
    });
    return {
      name: this.name,
      real: true,
      url: server.url,
      model: "tiny-qwen2.gguf",
      steer(want) {
        // A random model writes what a grammar admits, or continues a prefilled assistant turn
        // (ended at once by biasing <|im_end|>); left alone it rambles.
        if ("text" in want)
          return want.prefill
            ? { prefill: want.text, logit_bias: [[IM_END, 100]] }
            : { grammar: exactly(want.text) };
        if ("ramble" in want) return { ignore_eos: true };
        if ("call" in want) return { prefill: callText(want.call), logit_bias: [[IM_END, 100]] };
        const text = callText(want.cutCall);
        return { prefill: text.slice(0, text.indexOf("}") - 2), max_tokens: 1 };
      },
      kill: () => server.kill(),
      close: () => server.close(),
    };
  },
});

/** The OpenAI-compatible targets: the fake llama.cpp, and the real llama-server when installed. */
export function openaiTargets(): TargetKind[] {
  return [fakeLlama, ...(real.llama ? [realLlama(real.llama)] : [])];
}

const fakeOllama: TargetKind = {
  name: "fake Ollama",
  real: false,
  async start(o) {
    const fake = await startFakeOllama({
      // as the real one is started: OLLAMA_CONTEXT_LENGTH, OLLAMA_KEEP_ALIVE
      defaultContext: o.ctx,
      ...(o.keepAlive ? { keepAliveMs: keepAliveMs(o.keepAlive) } : {}),
      models: {
        "tiny-qwen2:latest": {
          capabilities: ["completion", "tools"],
          family: "qwen2",
          contextLength: 131072,
          template:
            "{{- if .Tools }}<tools>{{ .Tools }}</tools> Return <tool_call>{...}</tool_call>{{ end }}",
        },
      },
    });
    return {
      name: this.name,
      real: false,
      url: fake.url,
      model: "tiny-qwen2",
      steer(want) {
        if ("text" in want) fake.inject({ content: want.text });
        else if ("call" in want) fake.inject({ content: "", toolCalls: [want.call] });
        else fake.inject(RAMBLE);
        return {};
      },
      kill: () => fake.close(),
      close: () => fake.close(),
    };
  },
};

const realOllama = (bin: { binary: string; models: string }): TargetKind => ({
  name: "Ollama",
  real: true,
  async start(o) {
    const server = await startOllama({
      binary: bin.binary,
      models: bin.models,
      env: {
        OLLAMA_CONTEXT_LENGTH: String(o.ctx),
        ...(o.keepAlive ? { OLLAMA_KEEP_ALIVE: o.keepAlive } : {}),
      },
    });
    return {
      name: this.name,
      real: true,
      url: server.url,
      model: "tiny-qwen2",
      steer(want) {
        if ("text" in want) return { format: { const: want.text } };
        if ("ramble" in want) return {};
        return { format: { const: "call" in want ? want.call : want.cutCall } };
      },
      kill: () => server.kill(),
      close: () => server.close(),
    };
  },
});

/** The Ollama targets: the fake, and the real Ollama when installed. */
export function ollamaTargets(): TargetKind[] {
  return [fakeOllama, ...(real.ollama ? [realOllama(real.ollama)] : [])];
}
