/** The probe's deadline: a server that never replies is given up on once, named, and not retried. */
import { describe, expect, it } from "vitest";
import { classifyModelError, ModelServerError, NoReplyError } from "../../../src/models/errors.js";
import { createCapabilityProbe, withReplyDeadline } from "../../../src/models/probe.js";

/** A fetch that answers nothing until its signal aborts it. */
const silent =
  (count: { calls: number }): typeof fetch =>
  (_input, init) => {
    count.calls++;
    return new Promise<Response>((_, reject) =>
      init?.signal?.addEventListener("abort", () => reject(new Error("aborted"))),
    );
  };

describe("the probe's reply deadline", () => {
  it("rejects with 'no reply from <url> within N s', classified unreachable and not retryable", async () => {
    const count = { calls: 0 };
    const err = await withReplyDeadline(
      silent(count),
      50,
    )("http://127.0.0.1:1/api/show").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoReplyError);
    expect((err as Error).message).toBe("no reply from http://127.0.0.1:1/api/show within 0.1 s");
    expect(classifyModelError(err)).toMatchObject({ kind: "unreachable", retryable: false });
  });

  it("the capability probe waits requestTimeoutMs when shorter, once, and ends in a ModelServerError", async () => {
    const count = { calls: 0 };
    const probe = createCapabilityProbe(silent(count));
    const started = Date.now();
    const err = await probe("http://127.0.0.1:1", "qwen3:8b", {
      retries: 4,
      baseMs: 1,
      url: "http://127.0.0.1:1",
      model: "qwen3:8b",
      timeoutMs: 100,
    }).catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(err).toBeInstanceOf(ModelServerError);
    expect((err as ModelServerError).kind).toBe("unreachable");
    expect((err as Error).message).toContain(
      "no reply from http://127.0.0.1:1/api/show within 0.1 s",
    );
    expect(count.calls).toBe(1);
  });

  it("passes a reply that comes in time through whole", async () => {
    const ok = (() => Promise.resolve(new Response('{"a":1}', { status: 200 }))) as typeof fetch;
    const res = await withReplyDeadline(ok, 1000)("http://x/api/tags");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ a: 1 });
  });
});
