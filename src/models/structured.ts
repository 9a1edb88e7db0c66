import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { z } from "zod";
import { withModelRetry, type RetryPolicy } from "./retry.js";

/**
 * Asks the model for output matching `schema` (Ollama's `format` with the JSON schema). Transport
 * failures are retried and then thrown as `ModelServerError`; an answer that does not validate gets
 * one repair turn with the error, then `null` — small local models drift, callers fall back.
 */
export async function structuredCall<S extends z.ZodObject>(
  model: BaseChatModel,
  schema: S,
  system: string,
  user: string,
  policy: RetryPolicy,
): Promise<z.infer<S> | null> {
  const runnable = model.withStructuredOutput(schema, { includeRaw: true });
  const messages: BaseMessage[] = [new SystemMessage(system), new HumanMessage(user)];
  for (let attempt = 0; attempt < 2; attempt++) {
    const out = await withModelRetry(
      () => runnable.invoke(messages, { signal: policy.signal }),
      policy,
    );
    const checked = schema.safeParse(out.parsed);
    if (checked.success) return checked.data;
    const raw =
      typeof out.raw.content === "string" ? out.raw.content : JSON.stringify(out.raw.content);
    messages.push(
      out.raw,
      new HumanMessage(
        `That answer was not valid: ${checked.error.issues.map((i) => `${i.path.join(".") || "answer"}: ${i.message}`).join("; ")}. Reply again with JSON matching the schema only. (You sent: ${raw.slice(0, 200)})`,
      ),
    );
  }
  return null;
}
