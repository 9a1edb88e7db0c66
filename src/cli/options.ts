/** Option parsers several keel commands share (the run settings' flags: setting-flags.ts). */
import { InvalidArgumentError } from "commander";

export const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a whole number ≥ 1");
  return n;
};

/** Commander's collector of a repeatable option. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];
