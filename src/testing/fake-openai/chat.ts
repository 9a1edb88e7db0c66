/**
 * The fake OpenAI-compatible server's `/v1/chat/completions`: the request checked as each server
 * checks it, given a slot (and, on llama-server's one KV cache, room beside the requests in
 * flight), answered from the script, cut to its budget, and written whole or streamed.
 */
import type { ServerResponse } from "node:http";
import { MACHINES } from "../fake-ollama/prefill.js";
import { sleep, unofferedCall } from "../fake-ollama/replies.js";
import {
  viewOf,
  type AnswerReply,
  type FaultReply,
  type RecordedRequest,
} from "../fake-ollama/types.js";
import { countTokens, cutToTokens } from "../tokens.js";
import {
  applyTemplate,
  cutReply,
  generatedText,
  llamaId,
  overContext,
  timings,
  wrongField,
} from "./llamacpp.js";
import {
  id,
  asChatBody,
  sendError,
  sendNoRoom,
  writeCompletion,
  writeStream,
  type Completion,
  type WireCall,
} from "./replies.js";
import type { SlotAccount } from "./slots.js";
import type { FakeOpenAIModel, FakeOpenAIState, Flight, OpenAIChatBody } from "./types.js";

/** A request the server takes and the model it runs on, or the status and message it refuses it with. */
type Checked = { b: OpenAIChatBody; model: FakeOpenAIModel } | { status: number; message: string };

/** The reply as generated within the budget, and the tokens it took. */
interface Generated {
  thinking: string;
  content: string;
  calls: WireCall[];
  tokens: number;
  /** Cut at the budget (finish_reason "length"). */
  cut: boolean;
}

/** Answers one chat completion request (its body parsed; llama.cpp's parse error already sent). */
export async function chat(
  fake: FakeOpenAIState,
  body: unknown,
  res: ServerResponse,
  recorded: RecordedRequest,
): Promise<void> {
  const checked = checkChat(fake, body);
  if ("status" in checked) return sendError(res, fake.kind, checked.status, checked.message);
  const { b, model } = checked;
  const chatBody = asChatBody(b);
  const context = model.contextLength ?? 8192;
  const prompt = applyTemplate(chatBody);
  const promptTokens = fake.count(prompt);
  const refusal = overContext(fake.kind, promptTokens, context);
  if (refusal) return sendError(res, fake.kind, 400, refusal.message, refusal.extra);
  const flight: Flight = { tokens: promptTokens, failed: false };
  if (!admit(fake, flight, context, res))
    return sendNoRoom(res, fake.kind, b.stream === true, recorded);
  const account = slotAccount(fake, b, prompt);
  const view = viewOf(chatBody, "", { truncated: false, promptTokens });
  const reply = fake.queue.length ? fake.queue.shift()! : await fake.script(view);
  if ("fault" in reply) return writeFault(fake, reply, res);
  const unoffered = unofferedCall(reply, view);
  if (unoffered) {
    fake.violations.push(unoffered);
    return sendError(res, fake.kind, 500, `fake-openai: ${unoffered}`);
  }
  const g = generate(reply, wireCalls(fake, reply), budgetOf(fake, b, context - promptTokens));
  fake.slots.generated(account.slot, generatedText(g.content, g.calls));
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: g.tokens,
    total_tokens: promptTokens + g.tokens,
    ...(fake.llama ? { prompt_tokens_details: { cached_tokens: account.cachedTokens } } : {}),
  };
  const finish = g.cut ? "length" : (reply.doneReason ?? (g.calls.length ? "tool_calls" : "stop"));
  fake.answers.push({ finish, usage });
  const promptN = promptTokens - account.cachedTokens;
  if (reply.delayMs) await sleep(reply.delayMs);
  if (flight.failed) return sendNoRoom(res, fake.kind, b.stream === true, recorded);
  const completion: Completion = {
    ...completionBase(fake, b, reply, g, finish, usage),
    ...(fake.llama
      ? {
          timings: timings(account.cachedTokens, promptN, g.tokens, MACHINES.gpu),
          contentWithCalls: "",
        }
      : {}),
  };
  await send(fake, b, res, completion, recorded);
}

/** Checks a request in the server's order: `messages`, the model, then the fields it refuses. */
function checkChat(fake: FakeOpenAIState, body: unknown): Checked {
  const { kind, llama, opts } = fake;
  if (
    typeof body !== "object" ||
    body === null ||
    !Array.isArray((body as OpenAIChatBody).messages)
  )
    return { status: 400, message: "'messages' is required" };
  const b = body as OpenAIChatBody;
  // llama-server serves one model and ignores the name a request gives; the others look it up.
  const model = llama ? fake.servedModel : fake.models[b.model];
  if (!model) return { status: 404, message: `The model \`${b.model}\` does not exist.` };
  const wrongType = llama ? wrongField(b) : undefined;
  if (wrongType) return { status: 400, message: wrongType };
  if (b.stream_options && fake.rejectStreamOptions)
    return { status: 400, message: "Unrecognized request argument supplied: stream_options" };
  const refused = opts.rejectArguments?.find((k) => k in b);
  if (refused)
    return {
      status: 400,
      message:
        kind === "vllm"
          ? `[{'type': 'extra_forbidden', 'loc': ('body', '${refused}'), 'msg': 'Extra inputs are not permitted'}]`
          : `Unrecognized request argument supplied: ${refused}`,
    };
  if (b.tools?.length && opts.requireJinja)
    return { status: 500, message: "tools param requires --jinja flag" };
  if (b.tools?.length && opts.noAutoToolChoice)
    return {
      status: 400,
      message:
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    };
  return { b, model };
}

/**
 * Takes the request in flight; false when it does not fit. Without -np, llama-server's slots share
 * one KV cache of the context's size: when the requests in flight together do not fit, its decode
 * fails the batch — the newcomer, and those in flight that have not begun to answer (measured).
 */
function admit(
  fake: FakeOpenAIState,
  flight: Flight,
  context: number,
  res: ServerResponse,
): boolean {
  if (!fake.unifiedKv) return true;
  const inUse = [...fake.flights].reduce((n, f) => n + f.tokens, 0);
  if (inUse + flight.tokens > context) {
    for (const f of fake.flights) f.failed = true;
    return false;
  }
  fake.flights.add(flight);
  res.once("close", () => fake.flights.delete(flight));
  return true;
}

/** The slot the prompt goes to and what of it comes from the cache. */
function slotAccount(fake: FakeOpenAIState, b: OpenAIChatBody, prompt: string): SlotAccount {
  const { llama, opts } = fake;
  const reuse =
    llama && opts.shifts !== false && typeof b.n_cache_reuse === "number" ? b.n_cache_reuse : 0;
  const taken = fake.slots.take(
    prompt,
    reuse,
    llama && typeof b.id_slot === "number" && b.id_slot >= 0 ? b.id_slot : undefined,
  );
  // --no-cache-prompt, or a request's cache_prompt: false: the whole prompt is evaluated (measured)
  return opts.noCachePrompt || b.cache_prompt === false ? { ...taken, cachedTokens: 0 } : taken;
}

/** The faults this fake imitates: a status, a reset before any byte, a hang; a 500 for the rest. */
async function writeFault(
  fake: FakeOpenAIState,
  reply: FaultReply,
  res: ServerResponse,
): Promise<void> {
  switch (reply.fault) {
    case "status":
      if (reply.delayMs) await sleep(reply.delayMs);
      return sendError(res, fake.kind, reply.status, reply.error);
    case "reset-before":
      res.socket?.destroy();
      return;
    case "hang":
      fake.hanging.add(res);
      return;
    default:
      return sendError(res, fake.kind, 500, `fake-openai: fault ${reply.fault} is not imitated`);
  }
}

/** The script's calls as the server sends them: ids in its style, arguments as JSON text. */
function wireCalls(fake: FakeOpenAIState, reply: AnswerReply): WireCall[] {
  return (reply.toolCalls ?? []).map((c) => ({
    id: fake.llama ? llamaId() : id("call_"),
    type: "function",
    function: {
      name: c.name,
      arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
    },
  }));
}

/** The tokens a reply may take: max_tokens, and on llama-server the rest of the slot's context. */
function budgetOf(fake: FakeOpenAIState, b: OpenAIChatBody, contextLeft: number): number {
  const limit = b.max_completion_tokens ?? b.max_tokens;
  const room = fake.llama ? contextLeft : Infinity;
  return Math.min(limit !== undefined && limit >= 0 ? limit : Infinity, room);
}

/** Cuts the reply at `budget` tokens; reasoning is generated first and counts toward it. */
function generate(reply: AnswerReply, whole: WireCall[], budget: number): Generated {
  const thought = reply.thinking ?? "";
  const thoughtTokens = thought ? countTokens(thought) : 0;
  const thinking = thoughtTokens > budget ? cutToTokens(thought, budget) : thought;
  const after = cutReply(reply.content ?? "", whole, Math.max(0, budget - thoughtTokens));
  return {
    thinking,
    content: after.content,
    calls: after.calls,
    tokens: Math.min(thoughtTokens, budget) + after.tokens,
    cut: after.cut || thoughtTokens > budget,
  };
}

/** The completion as every server sends it: id, model, the generated reply, finish and usage. */
function completionBase(
  fake: FakeOpenAIState,
  b: OpenAIChatBody,
  reply: AnswerReply,
  { thinking, content, calls }: Generated,
  finish: string,
  usage: Record<string, unknown>,
): Completion {
  const { llama, opts } = fake;
  return {
    ...(opts.completionId ? { id: opts.completionId } : llama ? { id: llamaId("chatcmpl-") } : {}),
    model: llama ? fake.served : b.model,
    content,
    ...(thinking ? { thinking } : {}),
    ...(reply.thinkingPieces ? { thinkingPieces: reply.thinkingPieces } : {}),
    calls,
    finish,
    usage,
    ...(reply.pieces ? { pieces: reply.pieces } : {}),
    ...(reply.paceMs ? { paceMs: reply.paceMs } : {}),
  };
}

/** Writes the completion whole, or streams it (recording where a client that left stopped it). */
async function send(
  fake: FakeOpenAIState,
  b: OpenAIChatBody,
  res: ServerResponse,
  completion: Completion,
  recorded: RecordedRequest,
): Promise<void> {
  if (!b.stream) return writeCompletion(res, completion);
  const left = await writeStream(res, completion, b.stream_options?.include_usage === true);
  if (left !== undefined) recorded.clientLeftAfter = left;
  // llama-server closes its connection after every streamed reply, though it announced
  // keep-alive: a request a client sends on it before reading the close is never read
  const socket = res.socket;
  if (fake.llama && socket) {
    if (res.writableFinished) socket.destroy();
    else res.once("finish", () => socket.destroy());
  }
}
