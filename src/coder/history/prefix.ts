/**
 * Caches for a conversation that only grows. Messages are immutable, so what is derived from one
 * message is computed once; and what is derived from a thread's first messages (a running tally, a
 * token sum) is kept with the last of them, so the next turn extends it instead of starting over.
 */
import type { BaseMessage } from "@langchain/core/messages";

/** `compute(m)` once per message object. */
export function memo<T>(compute: (m: BaseMessage) => T): (m: BaseMessage) => T {
  const cache = new WeakMap<BaseMessage, T>();
  return (m) => {
    let v = cache.get(m);
    if (v === undefined) cache.set(m, (v = compute(m)));
    return v;
  };
}

/**
 * A running value over `messages[0..end)`, per `key` (a setting it depends on), after `before`
 * (what messages no longer in the list contributed, a value's own start): starts from the value
 * kept for the longest shorter prefix of the same thread (same first message, same position, same
 * `before`), copies it and adds the messages after it. A kept value is never mutated.
 */
export function prefixed<T, B extends object = never>(
  start: (key: number, before?: B) => T,
  copy: (value: T) => T,
  add: (value: T, m: BaseMessage) => void,
): (messages: readonly BaseMessage[], end: number, key: number, before?: B) => T {
  type Kept = Map<number, { end: number; first: BaseMessage; before: B | undefined; value: T }>;
  const kept = new WeakMap<BaseMessage, Kept>();
  return (messages, end, key, before) => {
    const first = messages[0];
    const at = (i: number) => {
      const hit = kept.get(messages[i - 1]!)?.get(key);
      return hit && hit.end === i && hit.first === first && hit.before === before
        ? hit.value
        : undefined;
    };
    let i = end;
    let base: T | undefined;
    while (i > 0 && (base = at(i)) === undefined) i--;
    const value = base === undefined ? start(key, before) : copy(base);
    for (; i < end; i++) add(value, messages[i]!);
    if (end > 0) {
      const last = messages[end - 1]!;
      kept.set(
        last,
        (kept.get(last) ?? (new Map() as Kept)).set(key, { end, first: first!, before, value }),
      );
    }
    return value;
  };
}
