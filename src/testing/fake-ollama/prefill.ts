/**
 * The fake's model of what a local server spends time on (docs/servers.md): a single KV-cache slot that
 * keeps the previous request's prompt and reply; a new request evaluates only the tokens after the
 * longest common prefix with it. A prompt over the window is cut at the front as Ollama 0.24's
 * runner does (docs/real-servers.md): it keeps the first four tokens and the newest ones,
 * `num_ctx` in all, and is still answered. A changed `num_ctx` reloads the model and empties the
 * cache (docs/servers.md: aider issues 4687, 4764).
 *
 * Tokens are counted with the fakes' tokenizer (src/testing/tokens.ts), or as characters divided
 * by a model's own characters per token when it sets one.
 */
import { countTokens, cutToTokens, tailToTokens, type TokenizerOptions } from "../tokens.js";
import type { ChatBody, MachineProfile, PrefillRecord } from "./types.js";

export type { MachineProfile, PrefillRecord } from "./types.js";

/**
 * Two machines for an 8B model at Q4_K_M. The rates are llama.cpp's published `llama-bench`
 * figures of that size and quantisation (its README and the performance discussions of its
 * repository): a recent 8-core desktop CPU runs prompt processing at roughly 50–70 tokens/s and
 * generation at 8–12; a 24 GB consumer GPU runs prompt processing in the low thousands of tokens/s
 * and generation near 100. Round, conservative values inside those ranges.
 */
export const MACHINES: Record<"cpu" | "gpu", MachineProfile> = {
  cpu: {
    name: "CPU (8-core desktop, 8B Q4)",
    prefillTokensPerSec: 60,
    generateTokensPerSec: 10,
    loadSec: 4,
  },
  gpu: {
    name: "GPU (24 GB, 8B Q4)",
    prefillTokensPerSec: 2500,
    generateTokensPerSec: 90,
    loadSec: 2,
  },
};

/** Ollama's default context when a request sets no num_ctx (docs/servers.md: 4096 since PR 11189). */
export const DEFAULT_NUM_CTX = 4096;

/** Renders a request the way a chat template does: the tools, then every message in order. */
export function renderPrompt(body: ChatBody): string {
  const tools = body.tools?.length
    ? `<|im_start|>tools\n${body.tools.map((t) => JSON.stringify(t)).join("\n")}<|im_end|>\n`
    : "";
  return tools + (body.messages ?? []).map(renderMessage).join("");
}

/** One message as the template shows it (thinking is not part of the history the model sees). */
export function renderMessage(m: {
  role: string;
  content?: string;
  tool_calls?: Array<{ function: { name: string; arguments: unknown } }>;
}): string {
  const calls = (m.tool_calls ?? [])
    .map(
      (c) =>
        `\n<tool_call>${JSON.stringify({ name: c.function.name, arguments: c.function.arguments })}</tool_call>`,
    )
    .join("");
  return `<|im_start|>${m.role}\n${m.content ?? ""}${calls}<|im_end|>\n`;
}

/** Seconds a request costs on `machine`: loading the model if it had to, prefill, generation. */
export function simulatedSeconds(
  r: Pick<PrefillRecord, "loaded" | "evaluatedTokens" | "generatedTokens">,
  machine: MachineProfile,
): number {
  return (
    (r.loaded ? machine.loadSec : 0) +
    r.evaluatedTokens / machine.prefillTokensPerSec +
    r.generatedTokens / machine.generateTokensPerSec
  );
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** One cache slot per fake server, as an Ollama runner with OLLAMA_NUM_PARALLEL=1. */
export class KvCache {
  private held = "";
  private numCtx: number | undefined;

  /** `defaultCtx`: the context of a request that names no num_ctx (OLLAMA_CONTEXT_LENGTH). */
  constructor(
    private readonly machine: MachineProfile,
    private readonly charsPerToken: (model: string) => number | TokenizerOptions | undefined,
    private readonly defaultCtx = DEFAULT_NUM_CTX,
  ) {}

  /** The model left memory (its keep_alive ran out): the next request loads it, with an empty cache. */
  unload(): void {
    this.held = "";
    this.numCtx = undefined;
  }

  /** Accounts the prompt of one request; `reply` is added to the cache once it is generated. */
  prefill(model: string, body: ChatBody, contextLength: number) {
    const cpt = this.charsPerToken(model);
    const tok =
      typeof cpt === "number"
        ? (text: string) => Math.ceil(text.length / cpt)
        : (text: string) => countTokens(text, cpt);
    const requested = Number(body.options?.num_ctx ?? this.defaultCtx);
    const numCtx = Math.min(requested, contextLength);
    const sent = renderPrompt(body);
    const sentTokens = tok(sent);
    // `truncate: false`: a prompt over the window is refused before the runner sees it.
    if (body.truncate === false && sentTokens > numCtx) return undefined;
    const loaded = this.numCtx !== numCtx;
    if (loaded) this.held = "";
    this.numCtx = numCtx;
    let seen = sent;
    let truncated = false;
    let promptTokens = tok(seen);
    if (promptTokens > numCtx) {
      // The runner keeps the first four tokens and the newest ones, num_ctx in all. (Ollama 0.24
      // first drops whole old messages that do not fit: not imitated; keel sends `truncate: false`
      // and gets the refusal above, docs/real-servers.md.)
      seen =
        typeof cpt === "number"
          ? seen.slice(0, Math.round(4 * cpt)) +
            seen.slice(seen.length - Math.round((numCtx - 4) * cpt))
          : cutToTokens(seen, 4, cpt) + tailToTokens(seen, numCtx - 4, cpt);
      truncated = true;
      promptTokens = numCtx;
    }
    const cachedChars = commonPrefix(seen, this.held);
    const cachedTokens = Math.min(promptTokens, tok(seen.slice(0, cachedChars)));
    const evaluatedTokens = promptTokens - cachedTokens;
    const rewrote = this.held.length > 0 && cachedChars < this.held.length;
    const account = {
      numCtx,
      sentTokens,
      promptTokens,
      cachedTokens,
      evaluatedTokens,
      cachedChars,
      promptChars: seen.length,
      rewrote,
      truncated,
      loaded,
      rendered: seen,
    };
    return {
      ...account,
      /** Completes the record once the reply is known; the cache then holds prompt + reply. */
      finish: (
        reply: {
          content: string;
          tool_calls?: Array<{ function: { name: string; arguments: unknown } }>;
        },
        /** Tokens generated, when the reply was cut at a limit (default: counted from the reply). */
        generated?: number,
      ): PrefillRecord => {
        const rendered = renderMessage({ role: "assistant", ...reply });
        // The cache holds the prompt and what was generated, without the closing marker the next
        // prompt may or may not repeat the same way.
        this.held = seen + rendered.replace(/<\|im_end\|>\n$/, "");
        const generatedTokens =
          generated ??
          Math.max(
            1,
            tok(reply.content) +
              (reply.tool_calls?.length ? tok(rendered) - tok(reply.content) : 0),
          );
        const done = { ...account, generatedTokens };
        return { ...done, seconds: simulatedSeconds(done, this.machine) };
      },
    };
  }
}
