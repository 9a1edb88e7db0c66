/** llama-server's slots: the real window is a slot's. */
import { describe, expect, it } from "vitest";
import { slotWindow } from "../../../../src/models/openai/slots.js";

describe("llama-server's slots", () => {
  it("the real window is a slot's", () => {
    expect(slotWindow({ nCtx: 4096, totalSlots: 4 })).toBe(1024);
    expect(slotWindow({ nCtx: 4096, slotCtx: 4096, totalSlots: 4 })).toBe(4096);
    expect(slotWindow({ slotCtx: 4096, totalSlots: 4, slots: [1024, 1024, 1024, 1024] })).toBe(
      1024,
    );
    expect(slotWindow({ nCtx: 8192 })).toBe(8192);
    expect(slotWindow({})).toBeUndefined();
  });
});
