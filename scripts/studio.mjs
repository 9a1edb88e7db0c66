#!/usr/bin/env node
// `npm run studio`: the LangGraph dev server on a free port (2024, its default, is often taken),
// serving keel's graphs from langgraph.json, and the Studio URL to open.
import { spawn } from "node:child_process";
import { createServer } from "node:net";

const port = await new Promise((resolve, reject) => {
  const srv = createServer();
  srv.once("error", reject);
  srv.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
    const p = srv.address().port;
    srv.close(() => resolve(p));
  });
});
const url = `http://127.0.0.1:${port}`;
console.log(`keel graphs (coder, analyst, intent) on ${url}`);
console.log(
  `LangGraph Studio: https://smith.langchain.com/studio/?baseUrl=${encodeURIComponent(url)}`,
);
console.log(
  [
    "The model server, its key, the sandbox and approval come from this process's environment",
    "(OLLAMA_HOST, KEEL_PROVIDER, KEEL_BASE_URL, OPENAI_API_KEY) and ~/.config/keel/settings.json;",
    "a run's context may set the model, the workspace and other harmless settings (docs/studio.md).\n",
  ].join("\n"),
);
const child = spawn(
  "npx",
  [
    "--no-install",
    "langgraphjs",
    "dev",
    "--port",
    String(port),
    "--host",
    "127.0.0.1",
    "--no-browser",
    ...process.argv.slice(2),
  ],
  { stdio: "inherit" },
);
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
child.on("exit", (code) => process.exit(code ?? 0));
