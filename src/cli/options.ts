/** Option parsers and options several keel commands share. */
import { InvalidArgumentError, Option } from "commander";
import { settingDefault } from "../agent/context.js";

export const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number ≥ 1");
  return n;
};

export const retryCount = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 10)
    throw new InvalidArgumentError("expected a whole number from 0 to 10");
  return n;
};

/** --context-window: the num_ctx keel asks for; the model's own context caps it. */
export const contextWindowOption = () =>
  new Option(
    "--context-window <tokens>",
    "context window keel asks the server for (num_ctx); never more than the model's own context, which caps it",
  )
    .argParser((v) => {
      const n = positiveInt(v);
      if (n < 1024) throw new InvalidArgumentError("expected at least 1024 tokens");
      return n;
    })
    .default(undefined, String(settingDefault("contextWindow")));

/** Commander's collector of a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
