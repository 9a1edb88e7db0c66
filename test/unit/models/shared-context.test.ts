/**
 * The gate of a llama-server whose slots share one KV cache (models/shared-context.ts), through the
 * wire: a refusal found in a stream's first event, a stream that was not refused passed on whole,
 * and an answer nobody finishes reading does not hold the server's next request forever.
 */
import { describe, expect, it } from "vitest";
import { ContextGate, refusedForRoom } from "../../../src/models/shared-context.js";
import { createWireFetch } from "../../../src/models/wire.js";

const sse = (...events: string[]) =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(ctrl) {
        for (const e of events) ctrl.enqueue(new TextEncoder().encode(`data: ${e}\n\n`));
        ctrl.close();
      },
    }),
    { status: 200, headers: { "Content-Type": "text/event-stream" } },
  );
const FULL = JSON.stringify({
  error: { code: 500, message: "Context size has been exceeded.", type: "server_error" },
});
const CHUNK = JSON.stringify({ choices: [{ index: 0, delta: { content: "hi" } }] });

describe("refusedForRoom", () => {
  it("a stream whose first event is the refusal; a 500 with it", async () => {
    expect((await refusedForRoom(sse(FULL))).full).toBe(true);
    const plain = await refusedForRoom(new Response(FULL, { status: 500 }));
    expect(plain.full).toBe(true);
    expect(await plain.res.text()).toBe(FULL);
  });

  it("any other answer comes back whole, from its first byte", async () => {
    const seen = await refusedForRoom(sse(CHUNK, "[DONE]"));
    expect(seen.full).toBe(false);
    expect(await seen.res.text()).toBe(`data: ${CHUNK}\n\ndata: [DONE]\n\n`);
    const other = await refusedForRoom(new Response("boom", { status: 500 }));
    expect(other.full).toBe(false);
    expect(await other.res.text()).toBe("boom");
  });
});

describe("the wire's gate", () => {
  it("one at a time: an answer its reader abandons lets the next request go after the timeout", async () => {
    const gate = new ContextGate();
    gate.serialize();
    const sent: number[] = [];
    const wire = createWireFetch({
      timeoutMs: 50,
      isChat: () => true,
      gate,
      baseFetch: () => {
        sent.push(Date.now());
        return Promise.resolve(sse(CHUNK, "[DONE]"));
      },
    });
    const first = await wire("http://h/v1/chat/completions", { method: "POST", body: "{}" });
    expect(first.status).toBe(200); // never read
    const second = await wire("http://h/v1/chat/completions", { method: "POST", body: "{}" });
    expect(await second.text()).toContain("[DONE]");
    expect(sent).toHaveLength(2);
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(40);
  });

  it("requests overlap until one is refused for room; it is sent again alone", async () => {
    const gate = new ContextGate();
    let inFlight = 0;
    const answers: string[] = [];
    const wire = createWireFetch({
      timeoutMs: 5_000,
      isChat: () => true,
      gate,
      baseFetch: async () => {
        inFlight++;
        const crowded = inFlight > 1;
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        answers.push(crowded ? "refused" : "answered");
        return crowded ? sse(FULL) : sse(CHUNK, "[DONE]");
      },
    });
    const post = () =>
      wire("http://h/v1/chat/completions", { method: "POST", body: "{}" }).then((r) => r.text());
    const texts = await Promise.all([post(), post()]);
    for (const t of texts) expect(t).toContain("[DONE]");
    expect(gate.oneAtATime).toBe(true);
    expect(answers).toEqual(["answered", "refused", "answered"]);
  });
});
