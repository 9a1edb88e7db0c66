/** The coder state's delta channels: the appending messages reducer and the window of seen files. */
import { HumanMessage, RemoveMessage, type BaseMessage } from "@langchain/core/messages";
import { messagesDeltaReducer } from "@langchain/langgraph";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { appendMessages, mergeSeen, SEEN_WINDOW } from "../../../src/coder/channels.js";

const msg = (id: string, text = id) => new HumanMessage({ id, content: text });
const view = (ms: BaseMessage[]) => ms.map((m) => `${m.id}:${m.text}`);

/** A write: new messages, a replacement of an id, or a removal. */
const write = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 3 }).map((ids) => ({
    kind: "add" as const,
    ids,
  })),
  fc.integer({ min: 0, max: 30 }).map((id) => ({ kind: "remove" as const, ids: [id] })),
);

describe("appendMessages", () => {
  it("gives what LangGraph's messages delta reducer gives, write by write and replayed at once", () => {
    fc.assert(
      fc.property(fc.array(write, { maxLength: 25 }), (writes) => {
        let ours: BaseMessage[] = [];
        let stock: BaseMessage[] = [];
        const all: BaseMessage[][] = [];
        for (const [step, w] of writes.entries()) {
          const value =
            w.kind === "add"
              ? w.ids.map((i) => msg(`m${i}`, `${i}@${step}`))
              : stock.some((m) => m.id === `m${w.ids[0]}`)
                ? [new RemoveMessage({ id: `m${w.ids[0]}` })]
                : [];
          all.push(value);
          ours = appendMessages(ours, [value]);
          stock = messagesDeltaReducer(stock, [value]);
          expect(view(ours)).toEqual(view(stock));
        }
        expect(view(appendMessages([], all))).toEqual(view(stock));
      }),
      { numRuns: 200 },
    );
  });

  it("an append does not copy the index: the same id later replaces in place", () => {
    let state: BaseMessage[] = [];
    for (let i = 0; i < 1000; i++) state = appendMessages(state, [[msg(`m${i}`)]]);
    const replaced = appendMessages(state, [[msg("m500", "new")]]);
    expect(replaced).toHaveLength(1000);
    expect(replaced[500]!.content).toBe("new");
    // The older value is untouched (a node may still hold it).
    expect(state[500]!.content).toBe("m500");
    expect(appendMessages(state, [[msg("m999", "again")]])[999]!.content).toBe("again");
  });
});

describe("mergeSeen", () => {
  it("keeps the newest SEEN_WINDOW files; a file seen again becomes the newest", () => {
    let seen: Record<string, string> = {};
    for (let i = 0; i < SEEN_WINDOW; i++) seen = mergeSeen(seen, [{ [`f${i}.ts`]: `h${i}` }]);
    seen = mergeSeen(seen, [{ "f0.ts": "again" }, { "new.ts": "n" }]);
    expect(Object.keys(seen)).toHaveLength(SEEN_WINDOW);
    expect(seen["f0.ts"]).toBe("again");
    expect(seen["f1.ts"]).toBeUndefined(); // the oldest fell out
    expect(seen["new.ts"]).toBe("n");
    expect(Object.keys(seen).at(-1)).toBe("new.ts");
  });

  it("a file named __proto__ or constructor is a file like any other", () => {
    const proto = JSON.parse('{"__proto__":"h1"}') as Record<string, string>;
    const seen = mergeSeen(mergeSeen({}, [proto]), [{ constructor: "h2" }]);
    expect(Object.entries(seen)).toEqual([
      ["__proto__", "h1"],
      ["constructor", "h2"],
    ]);
    expect(Object.hasOwn(seen, "__proto__")).toBe(true);
  });
});
