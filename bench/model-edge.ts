/**
 * `npx tsx bench/model-edge.ts`: what the model servers receive from keel and what keel makes of
 * their replies, at the edge issue 24 measured on real servers — the share of chat requests that
 * carry a generation budget (max_tokens / num_predict), whether a call cut by the length limit is
 * run, whether arguments encoded twice reach the tool, on the fake llama.cpp and the fake Ollama.
 * Deterministic counts (scripted model), so it runs the same on any checkout of keel. Runs are
 * streamed, as the CLI streams them.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { runConfig } from "../src/coder/context.js";
import { createCoderGraph } from "../src/coder/graph.js";
import { startFakeOllama } from "../src/testing/fake-ollama/index.js";
import type { Script } from "../src/testing/fake-ollama/types.js";
import { startFakeOpenAI } from "../src/testing/fake-openai/index.js";
import { call, calls, keelScript } from "../src/testing/script.js";
import { benchTemp } from "./temp.js";

type Provider = "ollama" | "openai";

async function run(provider: Provider, script: Script, request: string) {
  const f =
    provider === "ollama"
      ? await startFakeOllama({ script })
      : await startFakeOpenAI({ server: "llama.cpp", script });
  const workspace = benchTemp("keel-edge-");
  const graph = createCoderGraph().compile({ checkpointer: new MemorySaver() });
  const config = runConfig(`edge-${Math.random()}`, {
    ...(provider === "ollama"
      ? { ollamaUrl: f.url, model: "qwen3:8b" }
      : {
          provider: "openai" as const,
          baseUrl: (f as { baseUrl: string }).baseUrl,
          model: "qwen2.5-coder-7b-instruct",
        }),
    workspace,
    retryBaseMs: 5,
    maxTurns: 8,
  });
  let status = "error";
  try {
    // Streamed, as the CLI runs it: the model's reply arrives in chunks (ChatOpenAI's stream path).
    const stream = await graph.stream(
      { messages: [new HumanMessage(request)] },
      { ...config, streamMode: ["values", "messages"] },
    );
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>)
      if (mode === "values") status = (chunk as { status: string }).status;
  } catch (e) {
    status = `error: ${(e as Error).message.slice(0, 60)}`;
  }
  const bodies = f.requests
    .filter((r) => r.method === "POST" && /chat/.test(r.path))
    .map((r) => r.body as { max_tokens?: number; options?: { num_predict?: number } });
  await f.close();
  return { status, workspace, bodies };
}

const build = keelScript((req) =>
  req.turn < 4
    ? calls(call("write_file", { path: `f${req.turn}.txt`, content: `${req.turn}\n` }))
    : { content: "Wrote four files." },
);
const cut = keelScript((req) =>
  req.turn === 0
    ? {
        toolCalls: [
          { name: "write_file", arguments: '{"path": "big.py", "content": "print(1)\\nprint(' },
        ],
        doneReason: "length",
      }
    : { content: "Stopped." },
);
const twice = keelScript((req) =>
  req.turn === 0
    ? {
        toolCalls: [
          {
            name: "write_file",
            arguments: JSON.stringify(JSON.stringify({ path: "t.txt", content: "t\n" })),
          },
        ],
      }
    : { content: "Done." },
);

const rows: string[] = [];
for (const provider of ["openai", "ollama"] as const) {
  const b = await run(provider, build, "Create f0.txt to f3.txt, please");
  const budgeted = b.bodies.filter(
    (x) => x.max_tokens !== undefined || x.options?.num_predict !== undefined,
  ).length;
  rows.push(
    `${provider.padEnd(7)} requests with a generation budget: ${budgeted}/${b.bodies.length} (${Math.round((100 * budgeted) / b.bodies.length)}%)`,
  );
  const c = await run(provider, cut, "Create big.py");
  const file = path.join(c.workspace, "big.py");
  rows.push(
    `${provider.padEnd(7)} call cut by the length limit: ${existsSync(file) ? `RUN (big.py written, ${JSON.stringify(readFileSync(file, "utf8"))})` : "not run"}`,
  );
  const t = await run(provider, twice, "Create t.txt");
  rows.push(
    `${provider.padEnd(7)} arguments encoded twice: ${existsSync(path.join(t.workspace, "t.txt")) ? "file on disk" : `call lost (run ${t.status})`}`,
  );
}
process.stdout.write(`${rows.join("\n")}\n`);
