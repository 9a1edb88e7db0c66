/**
 * The work of reading one reply, counted: every pass of a reader over the text, every body handed
 * to a reader, every scan for a bracket's or a tag's end charges the characters it reads. The
 * readers are written so that this stays linear in the reply (a test holds them to it: ten times
 * the reply, at most about ten times the steps), and a reply whose reading would cost more than
 * `STEPS_PER_CHAR` steps a character is not read as calls at all: however a reply is built, no
 * parse can hold keel.
 */

/** Steps a reply may cost per character before its reading is given up. */
export const STEPS_PER_CHAR = 400;
/** Steps any reply may cost, whatever its length (short replies are read by many readers). */
export const BASE_STEPS = 200_000;

/** Thrown when a reply's reading passes its budget; `parseToolCalls` catches it. */
export class TooMuchWork extends Error {
  constructor(readonly steps: number) {
    super(`reading the reply took more than ${steps} steps`);
  }
}

/** Counts the steps of one parse; `limit` ends it. Pass one in `ParseOptions.meter` to read it. */
export class Meter {
  steps = 0;
  limit = Infinity;
  charge(n: number): void {
    this.steps += n;
    if (this.steps > this.limit) throw new TooMuchWork(this.limit);
  }
}

/** The meter of the parse in progress (parses are synchronous; a nested one has its own). */
let current: Meter | undefined;

/** Charges `n` steps to the parse in progress. */
export function charge(n: number): void {
  current?.charge(n);
}

/** Runs `read` with `meter` charged, restoring the meter of an enclosing parse after it. */
export function metered<T>(meter: Meter, read: () => T): T {
  const outer = current;
  current = meter;
  try {
    return read();
  } finally {
    current = outer;
  }
}

/** `re.matchAll(text)`, charging the characters each match advances over (the whole text in all). */
export function* scanAll(re: RegExp, text: string): Generator<RegExpExecArray & { index: number }> {
  let at = 0;
  for (const m of text.matchAll(re)) {
    const end = m.index + m[0].length;
    charge(Math.max(1, end - at));
    at = Math.max(at, end);
    yield m;
  }
  charge(Math.max(0, text.length - at));
}
