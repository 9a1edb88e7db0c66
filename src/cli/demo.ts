import { existsSync, mkdtempSync, readFileSync, realpathSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pc from "picocolors";
import { createDemoScript, DEMO_REQUEST } from "../demo/script.js";
import { startFakeOllama } from "../testing/fake-ollama/index.js";
import type { RunOutcome } from "../session/outcome.js";
import { runSession, UsageError } from "../session/session.js";

const BANNER = `${pc.bgYellow(pc.black(" SCRIPTED DEMO "))} The model's replies come from keel's built-in script, not from a real
model: no Ollama is needed. Everything else is real — the LangGraph graph, the tools, the sandbox,
the loop guard, the recovery ladder, the checkpoints and the files written to disk. The script makes
the classic agent mistakes (F1–F8 in docs/DESIGN.md) and corrects each only after keel feeds it the error.`;

/** Runs the coder graph on a build request against the scripted fake server, in a temp workspace. */
export async function runDemo(flags: { json?: boolean; workspace?: string }): Promise<RunOutcome> {
  const out = flags.json ? process.stderr : process.stdout;
  const workspace = flags.workspace
    ? path.resolve(flags.workspace)
    : realpathSync(mkdtempSync(path.join(tmpdir(), "keel-demo-")));
  if (existsSync(workspace) && !statSync(workspace).isDirectory())
    throw new UsageError(
      `workspace ${workspace} is not a folder; pass a folder to build in (it is made when missing)`,
    );
  await mkdir(workspace, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot make the workspace ${workspace}: ${err.code ?? err.message}`);
  });
  const fake = await startFakeOllama({ script: createDemoScript() });
  out.write(
    `${BANNER}\n\n${pc.bold("request")}  ${DEMO_REQUEST}\n${pc.bold("workspace")} ${workspace}\n\n`,
  );
  try {
    const outcome = await runSession({
      request: DEMO_REQUEST,
      checkpoints: "memory",
      settings: { workspace, model: "qwen3:8b", ollamaUrl: fake.url, retryBaseMs: 200 },
      log: (line) => out.write(`${line}\n`),
    });
    if (!flags.json) {
      for (const f of outcome.files_written) {
        const text = readFileSync(path.join(workspace, f), "utf8");
        out.write(
          `\n${pc.bold(f)} ${pc.dim(`(${text.length} bytes, on disk)`)}\n${pc.dim(text.split("\n").slice(0, 6).join("\n"))}\n`,
        );
      }
      out.write(
        `\n${pc.dim(`The scripted model server received ${fake.chatRequests().length} chat requests; every tool result went back with its tool_call_id and tool_name.`)}\n`,
      );
    }
    return { ...outcome, summary: `[scripted model] ${outcome.summary}` };
  } finally {
    await fake.close();
  }
}
