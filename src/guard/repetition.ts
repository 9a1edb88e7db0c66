/**
 * Repeated text in the model's replies: a reply that repeats one sentence or line over and over
 * (degenerate decoding, common in small quantised models), or the same reply as the previous ones.
 * Pure.
 */

const MIN_UNIT = 15;

/** Describes the repetition in `text`, or returns undefined. `previous` are earlier reply texts, newest last. */
export function findRepetition(
  text: string,
  previous: readonly string[] = [],
  times = 3,
): string | undefined {
  const t = text.trim();
  if (t.length < MIN_UNIT) return undefined;
  const units = t
    .split(/(?<=[.!?])\s+|\n+/)
    .map((u) => u.trim().toLowerCase())
    .filter((u) => u.length >= MIN_UNIT);
  const counts = new Map<string, number>();
  for (const u of units) counts.set(u, (counts.get(u) ?? 0) + 1);
  for (const [unit, n] of counts) {
    if (n >= times) return `the same sentence ${n} times in one reply: "${unit.slice(0, 80)}"`;
  }
  const norm = (s: string) => s.trim().replace(/\s+/g, " ").toLowerCase();
  const same = previous.filter((p) => norm(p) === norm(t)).length;
  if (same + 1 >= times - 1 && same > 0)
    return `the same reply ${same + 1} times: "${t.slice(0, 80)}"`;
  return undefined;
}
