/** What both fake servers do with an incoming request before routing it. */
import type { IncomingMessage } from "node:http";

/** The request's body as text and, when it is JSON, parsed (else the text itself). */
export async function readBody(req: IncomingMessage): Promise<{ raw: string; body: unknown }> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  try {
    return { raw, body: raw ? (JSON.parse(raw) as unknown) : undefined };
  } catch {
    return { raw, body: raw };
  }
}
