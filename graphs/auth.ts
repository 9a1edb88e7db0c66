/**
 * Who may call keel's LangGraph server (langgraph.json's `auth.path`). The server runs commands
 * and reads files for its caller, so a web page must not be one: a browser sends `Origin` with
 * every cross-origin request (and with every POST), and a request from any origin but LangGraph
 * Studio's own is refused with 403 before it reaches a route — CORS (langgraph.json's
 * `http.cors`) only stops a page from reading the answer, while a "simple" POST (`text/plain`,
 * which the server reads as JSON) would still run. A request whose `Host` is not the loopback
 * address the server listens on is refused too: a page that re-points its own name at 127.0.0.1
 * (DNS rebinding) is then not "same-origin" with it. A local process sends no `Origin` and may call.
 */
import { readFileSync } from "node:fs";
import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";

interface ServerConfig {
  http?: { cors?: { allow_origins?: string[] } };
}

/**
 * The origins that may call: langgraph.json's `http.cors.allow_origins`, one list for the CORS
 * answer and this check (LangGraph Studio's hosted UI: LangSmith, and its EU region).
 */
export const STUDIO_ORIGINS: readonly string[] =
  (JSON.parse(readFileSync(new URL("../langgraph.json", import.meta.url), "utf8")) as ServerConfig)
    .http?.cors?.allow_origins ?? [];

/** The host names the server answers to: `npm run studio` listens on 127.0.0.1 only. */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Why `request` may not call the server, or undefined when it may. */
export function refusal(request: Request): string | undefined {
  const origin = request.headers.get("origin");
  if (origin !== null && !STUDIO_ORIGINS.includes(origin))
    return `origin ${origin} may not call keel's server (only LangGraph Studio's: ${STUDIO_ORIGINS.join(", ")})`;
  const host = request.headers.get("host")?.replace(/:\d+$/, "");
  if (host !== undefined && !LOOPBACK.has(host.toLowerCase()))
    return `host ${host} is not this machine's loopback address; keel's server answers only there`;
  return undefined;
}

export const auth = new Auth().authenticate((request: Request) => {
  const why = refusal(request);
  if (why) throw new HTTPException(403, { message: why });
  return { identity: "local", permissions: [] };
});
