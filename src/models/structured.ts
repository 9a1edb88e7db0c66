import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { z } from "zod";
import { estimateTokens } from "../guard/token-estimate.js";
import { cutAtBudget, fittedBudget } from "./budget.js";
import { serverCounts } from "./reply-facts.js";
import { withModelRetry, type RetryPolicy } from "./retry.js";
import { callOverWire } from "./wire.js";

/**
 * Asks the model for output matching `schema` (a JSON schema: Ollama's `format`, OpenAI's
 * `response_format`). Transport
 * failures are retried and then thrown as `ModelServerError`; an answer that does not validate gets
 * one repair turn with the error, then `null` — small local models drift, callers fall back.
 * `maxTokens` is the call's generation budget (budget.ts), within what `window` leaves after the
 * prompt when it is given; an answer cut there is asked again shorter.
 */
export async function structuredCall<S extends z.ZodObject>(
  model: BaseChatModel,
  schema: S,
  system: string,
  user: string,
  policy: RetryPolicy,
  {
    maxTokens,
    window,
    onPrompt,
  }: {
    /** The answer's generation budget (settings `generationBudget`). */
    maxTokens?: number;
    /** The run's window: the budget sent is at most what it leaves after the prompt. */
    window?: number;
    /** Called with the server's count of each prompt it evaluated, where it reports one. */
    onPrompt?: (tokens: number) => void;
  } = {},
): Promise<z.infer<S> | null> {
  // A JSON schema on every provider (Ollama's `format`, OpenAI's `response_format`), never a forced
  // tool call: servers without auto tool choice reject those.
  const runnable = model.withStructuredOutput(schema, { includeRaw: true, method: "jsonSchema" });
  const messages: BaseMessage[] = [new SystemMessage(system), new HumanMessage(user)];
  for (let attempt = 0; attempt < 2; attempt++) {
    const prompt = estimateTokens(messages.map((m) => m.text).join("\n"));
    const budget =
      maxTokens && window !== undefined ? fittedBudget(maxTokens, window, prompt) : maxTokens;
    const { value: out, facts } = await withModelRetry(
      () =>
        callOverWire(
          { thinking: [], ...(budget ? { maxTokens: budget } : {}) },
          () => runnable.invoke(messages, { signal: policy.signal }),
          (e, facts) => {
            // The OpenAI client parses a JSON-schema answer itself and throws on one that is not
            // JSON (prose, or JSON cut at the budget). The server did answer (its finish reason
            // arrived): that is the model's answer, not a fault of the server to retry.
            if (facts.finishReason !== undefined && unreadableAnswer(e)) return undefined;
            throw e;
          },
        ),
      policy,
    );
    const counted = serverCounts(out?.raw, facts).prompt;
    if (counted !== undefined) onPrompt?.(counted);
    if (out === undefined) {
      messages.push(
        new HumanMessage(
          facts.finishReason === "length"
            ? cutNote(budget)
            : "That answer was not JSON. Reply again with JSON matching the schema only.",
        ),
      );
      continue;
    }
    const checked = schema.safeParse(out.parsed);
    if (checked.success) return checked.data;
    messages.push(
      out.raw,
      new HumanMessage(
        cutAtBudget(out.raw, facts) ? cutNote(budget) : repairNote(checked.error, out.raw.content),
      ),
    );
  }
  return null;
}

/** The repair turn's message for an answer cut at its budget. */
const cutNote = (maxTokens?: number) =>
  `That answer was cut at the generation budget of ${maxTokens} tokens. Reply again with shorter JSON matching the schema only.`;

/**
 * The OpenAI client's errors for an answer it could not parse: not JSON (`SyntaxError`), or cut
 * at the budget before its JSON closed (`LengthFinishReasonError`).
 */
const unreadableAnswer = (e: unknown) =>
  e instanceof SyntaxError ||
  (e instanceof Error &&
    (e.constructor.name === "LengthFinishReasonError" ||
      /length limit was reached/.test(e.message)));

/** The one repair turn's message: what was wrong with an answer that did not validate. */
export function repairNote(error: z.ZodError, sent: unknown): string {
  const raw = typeof sent === "string" ? sent : JSON.stringify(sent);
  return `That answer was not valid: ${error.issues.map((i) => `${i.path.join(".") || "answer"}: ${i.message}`).join("; ")}. Reply again with JSON matching the schema only. (You sent: ${raw.slice(0, 200)})`;
}
