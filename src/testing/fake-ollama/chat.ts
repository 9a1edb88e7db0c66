/**
 * The fake Ollama's `/api/chat`: the request checked as Ollama checks it (its Go decoder's and its
 * capability errors, word for word), its prefill accounted, and the script's reply written.
 */
import type { ServerResponse } from "node:http";
import { sendError, writeReply } from "./replies.js";
import { lookupModel, prefillFor, recordedFinish, withTag, type FakeOllamaState } from "./state.js";
import { viewOf, type ChatBody, type FakeModel } from "./types.js";

/** A chat request Ollama would take, or the status and error it refuses it with. */
type Checked = { body: ChatBody; model: FakeModel } | { status: number; error: string };

/** Answers one `/api/chat` request (`raw` its body as sent, `body` parsed). */
export async function chat(
  fake: FakeOllamaState,
  raw: string,
  body: unknown,
  prefix: string,
  res: ServerResponse,
): Promise<void> {
  const checked = checkChat(fake.models, raw, body);
  if ("error" in checked) return sendError(res, checked.status, checked.error);
  const { body: b, model } = checked;
  const account = prefillFor(fake, b.model, b, model.contextLength ?? 8192);
  // Ollama's runner, asked not to truncate: 400 with its own words (measured on 0.24).
  if (!account) return sendError(res, 400, "the input length exceeds the context length");
  const view = viewOf(b, prefix, account);
  fake.chatHook?.(view, fake.chatCount++);
  const scripted = fake.queue.length ? fake.queue.shift()! : await fake.script(view);
  const stream = b.stream !== false;
  const thinks = model.capabilities.includes("thinking") && b.think !== false;
  // A thinking model asked for `format` with tools answers nothing (docs/servers.md: ollama issue
  // 10976); thinking is on when `think` is absent.
  const reply =
    thinks && view.structured && b.tools?.length && !("fault" in scripted)
      ? { content: "", allowInvalidJson: true }
      : scripted;
  await writeReply(reply, {
    res,
    view,
    stream,
    thinks,
    violations: fake.violations,
    hanging: fake.hanging,
    machine: fake.machine,
    account: recordedFinish(fake, account),
  });
  fake.residency.served(withTag(b.model), b.keep_alive);
}

/** Checks a chat request in Ollama's order: the body, `messages`, the model, then its capabilities. */
function checkChat(models: Record<string, FakeModel>, raw: string, body: unknown): Checked {
  if (!raw) return { status: 400, error: "missing request body" };
  if (typeof body !== "object" || body === null) return { status: 400, error: goJsonError(raw) };
  const b = body as ChatBody;
  if (b.messages !== undefined && !Array.isArray(b.messages)) {
    return {
      status: 400,
      error: `json: cannot unmarshal ${typeof b.messages} into Go struct field ChatRequest.messages of type []api.Message`,
    };
  }
  if (!b.model) return { status: 400, error: "model is required" };
  const model = lookupModel(models, b.model);
  if (!model) return { status: 404, error: `model '${b.model}' not found` };
  if (!model.capabilities.includes("completion"))
    return { status: 400, error: `"${b.model}" does not support chat` };
  if (b.tools?.length && !model.capabilities.includes("tools")) {
    return {
      status: 400,
      error: `registry.ollama.ai/library/${withTag(b.model)} does not support tools`,
    };
  }
  if (b.think && b.think !== false && !model.capabilities.includes("thinking")) {
    return { status: 400, error: `"${b.model}" does not support thinking` };
  }
  return { body: b, model };
}

/** Go's encoding/json message for a body that is not JSON (its first offending character). */
function goJsonError(raw: string): string {
  const text = raw.trim();
  if (text[0] === "{") {
    const next = text.slice(1).trim()[0];
    if (next !== undefined && next !== '"' && next !== "}")
      return `invalid character '${next}' looking for beginning of object key string`;
  }
  return `invalid character '${text[0] ?? ""}' looking for beginning of value`;
}
