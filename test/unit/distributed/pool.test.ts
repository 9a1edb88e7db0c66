/** The server pool: the provider from the URL, the least-busy server, a failing one's back-off. */
import { describe, expect, it } from "vitest";
import { parseServers, ServerPool } from "../../../src/distributed/pool.js";

describe("server pool", () => {
  const two = () =>
    new ServerPool(parseServers(["http://a:1", "http://b:2/v1"], "ollama"), {
      baseMs: 1000,
      maxMs: 4000,
    });

  it("reads the provider from the URL: /v1 is OpenAI-compatible", () => {
    expect(parseServers(["http://a:1/", "http://b:2/v1"], "ollama")).toEqual([
      { url: "http://a:1", provider: "ollama" },
      { url: "http://b:2/v1", provider: "openai" },
    ]);
    expect(() => parseServers([], "ollama")).toThrow(/at least one --server/);
    expect(() => parseServers(["gpu1"], "ollama")).toThrow(/not a URL/);
    expect(() => parseServers(["ftp://x"], "ollama")).toThrow(/http/);
  });

  it("gives each unit the least-busy server; idle servers take turns", () => {
    const p = two();
    expect(p.take(0)?.url).toBe("http://a:1");
    expect(p.take(0)?.url).toBe("http://b:2/v1");
    expect(p.take(0)?.url).toBe("http://a:1");
    p.release("http://a:1", { ok: true });
    p.release("http://a:1", { ok: true });
    expect(p.take(0)?.url).toBe("http://a:1"); // b is busy
    p.release("http://a:1", { ok: true });
    p.release("http://b:2/v1", { ok: true });
    const turns = [0, 1, 2, 3].map(() => {
      const s = p.take(0)!;
      p.release(s.url, { ok: true });
      return s.url;
    });
    expect(turns).toEqual(["http://b:2/v1", "http://a:1", "http://b:2/v1", "http://a:1"]);
  });

  it("takes a failing server out of rotation, with a doubling back-off, and back after a success", () => {
    const p = two();
    p.take(0);
    p.release("http://a:1", { ok: false, error: "refused", now: 0 });
    expect(p.take(10)?.url).toBe("http://b:2/v1");
    expect(p.take(10)?.url).toBe("http://b:2/v1"); // a is out, however idle
    expect(p.states(10)[0]).toEqual({
      url: "http://a:1",
      inFlight: 0,
      up: false,
      lastError: "refused",
    });
    expect(p.take(1000)?.url).toBe("http://a:1"); // retried at its time
    p.release("http://a:1", { ok: false, error: "refused", now: 1000 });
    expect(p.states(2999)[0]!.up).toBe(false); // 2 s now
    expect(p.states(3000)[0]!.up).toBe(true);
    p.take(3000);
    p.release("http://a:1", { ok: true });
    p.take(3000);
    p.release("http://a:1", { ok: false, error: "x", now: 3000 });
    expect(p.states(4000)[0]!.up).toBe(true); // the success reset the back-off to 1 s
  });

  it("says when the next server is back when all are out", () => {
    const p = two();
    p.take(0);
    p.take(0);
    p.release("http://a:1", { ok: false, error: "x", now: 0 });
    expect(p.nextUp(0)).toBe(0);
    p.release("http://b:2/v1", { ok: false, error: "x", now: 500 });
    expect(p.take(600)).toBeUndefined();
    expect(p.nextUp(600)).toBe(1000);
  });
});
