/** The fake Ollama's keep_alive, read as Ollama reads it. */
import { describe, expect, it } from "vitest";
import { keepAliveMs } from "../../../../src/testing/fake-ollama/residency.js";

describe("keepAliveMs", () => {
  it("keep_alive as Ollama reads it: Go durations, seconds, negative for ever", () => {
    expect(keepAliveMs("5m")).toBe(300_000);
    expect(keepAliveMs("1h30m")).toBe(5_400_000);
    expect(keepAliveMs("250ms")).toBe(250);
    expect(keepAliveMs(30)).toBe(30_000);
    expect(keepAliveMs("0")).toBe(0);
    expect(keepAliveMs("-1")).toBe(Infinity);
    expect(keepAliveMs("soon")).toBeUndefined();
  });
});
