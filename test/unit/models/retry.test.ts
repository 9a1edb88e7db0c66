/**
 * A request sent on a pooled connection the model server had closed (llama-server closes its
 * connection after every response while announcing keep-alive): sent again at once by the wire
 * and by the token counter; never a body that cannot be read twice, nor a stopped one.
 */
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closedUnanswered, resendingDropped } from "../../../src/models/retry.js";
import { createWireFetch } from "../../../src/models/wire.js";
import { serverTokenCounter } from "../../../src/models/token-count.js";

/**
 * A server that answers the first request of each connection and keeps it open, and drops every
 * later request on it unanswered: what a client meets when it sends on a pooled connection just
 * as llama-server closes it, every time rather than by a race.
 */
let server: Server;
let url: string;
const received: Array<{ path: string; connection: number; answered: boolean }> = [];
beforeAll(async () => {
  const sockets = new Map<Socket, number>();
  server = createServer((req, res) => {
    const known = sockets.has(req.socket);
    if (!known) sockets.set(req.socket, sockets.size + 1);
    received.push({ path: req.url ?? "", connection: sockets.get(req.socket)!, answered: !known });
    if (known) return void req.socket.destroy();
    req.resume();
    req.on("end", () => {
      const body = req.url === "/tokenize" ? '{"tokens":[1,2,3]}' : '{"ok":true}';
      res.writeHead(200, {
        "Content-Type": "application/json",
        "Keep-Alive": "timeout=5, max=100",
      });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const post = (f: typeof fetch, path = "/v1/chat/completions", body = "{}") =>
  f(`${url}${path}`, { method: "POST", body, headers: { "Content-Type": "application/json" } });

describe("a request its pooled connection dropped before any answer", () => {
  it("fails with the bare fetch: the case is real, and is the one named", async () => {
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await post(fetch).catch((e: unknown) => e));
    expect(outcomes.some((o) => closedUnanswered(o))).toBe(true);
  });

  it("is sent again at once by the wire, on another connection, and answered", async () => {
    const wire = createWireFetch({ timeoutMs: 5_000, isChat: () => true });
    received.length = 0;
    for (let i = 0; i < 4; i++) expect(await (await post(wire)).json()).toEqual({ ok: true });
    // every drop (a request on a connection that had answered) was sent again, and answered
    expect(received.filter((r) => r.answered)).toHaveLength(4);
    expect(received.length).toBeGreaterThan(4);
  });

  it("is sent again by the token counter, whose count is the server's, not an estimate", async () => {
    const count = serverTokenCounter({
      provider: "openai",
      server: "llama.cpp",
      baseUrl: `${url}/v1`,
      model: "m",
    })!;
    expect(await count("a b c")).toBe(3);
    expect(await count("a b c")).toBe(3);
  });

  it("is not sent again when its body cannot be read twice, nor once stopped, nor past a few drops", async () => {
    const dropped = Object.assign(new TypeError("fetch failed"), {
      cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
    });
    let sends = 0;
    const once = resendingDropped(() => {
      sends++;
      return Promise.reject(dropped);
    });
    const sent = async (init: RequestInit) => {
      sends = 0;
      await expect(once("http://x/v1/chat/completions", init)).rejects.toBe(dropped);
      return sends;
    };
    const stream = new ReadableStream({ start: (c) => c.close() });
    expect(await sent({ method: "POST", body: stream })).toBe(1);
    expect(await sent({ method: "POST", body: "{}", signal: AbortSignal.abort() })).toBe(1);
    expect(await sent({ method: "POST", body: "{}" })).toBe(5);
    // a refused connection is no drop: the caller's retry policy decides
    const refused = await fetch("http://127.0.0.1:1/x").catch((e: unknown) => e);
    expect(closedUnanswered(refused)).toBe(false);
  });
});
