import { mkdirSync, mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { afterEach, expect } from "vitest";
import { createCoderGraph } from "../../src/coder/graph.js";
import { runConfig, type SettingsInput } from "../../src/coder/context.js";
import type { CoderStateValue } from "../../src/coder/state.js";
import { startFakeOllama, type FakeOllama } from "../../src/testing/fake-ollama/index.js";
import { call, calls, keelScript } from "../../src/testing/script.js";

export { startFakeOllama };
export { call, calls, keelScript };
export { expandBraces, lastResult } from "../../src/testing/script.js";

/**
 * Fake Ollama servers per test: the returned function starts one; after each test every server it
 * started is closed and, unless the file tests the fake's own refusals, must have seen no request
 * a real Ollama would refuse (`violations`).
 */
export function fakeOllamaPerTest({ checkViolations = true } = {}) {
  let started: FakeOllama[] = [];
  afterEach(async () => {
    const servers = started;
    started = [];
    await Promise.all(servers.map((s) => s.close()));
    if (checkViolations) for (const s of servers) expect(s.violations).toEqual([]);
  });
  return async (options?: Parameters<typeof startFakeOllama>[0]): Promise<FakeOllama> => {
    const server = await startFakeOllama(options);
    started.push(server);
    return server;
  };
}

let counter = 0;

/** A fresh empty workspace under the OS temp folder. */
export function tempWorkspace(prefix = "keel-ws-"): string {
  return realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
}

/** A fresh empty workspace `ws` inside a fresh temp folder (room beside it for what must stay out). */
export function freshWorkspace(prefix: string): string {
  const w = path.join(tempWorkspace(prefix), "ws");
  mkdirSync(w);
  return w;
}

export interface RunOptions {
  workspace: string;
  context?: Partial<SettingsInput>;
  checkpointer?: BaseCheckpointSaver;
  threadId?: string;
}

/** Runs the compiled coder graph against the fake server; returns the final state. */
export async function runCoder(
  fake: FakeOllama,
  request: string | null,
  opts: RunOptions & { resume?: unknown },
) {
  const checkpointer = opts.checkpointer ?? new MemorySaver();
  const graph = createCoderGraph().compile({ checkpointer });
  const context = {
    ollamaUrl: fake.url,
    workspace: opts.workspace,
    retryBaseMs: 5,
    ...opts.context,
  };
  const threadId = opts.threadId ?? `t-${process.pid}-${++counter}`;
  const config = runConfig(threadId, context);
  const input =
    opts.resume !== undefined
      ? new Command({ resume: opts.resume })
      : request === null
        ? null
        : { messages: [new HumanMessage(request)] };
  const state = (await graph.invoke(input as never, config)) as CoderStateValue;
  const snapshot = await graph.getState(config);
  return { state, snapshot, threadId, checkpointer, graph, config };
}

import type { ChatBody, WireMessage } from "../../src/testing/fake-ollama/index.js";

/** The tool messages of a request body, in order. */
export const toolMessages = (body: ChatBody | undefined): WireMessage[] =>
  (body?.messages ?? []).filter((m) => m.role === "tool");

/** The last message of a request body. */
export const lastMessage = (body: ChatBody | undefined): WireMessage | undefined =>
  body?.messages?.[body.messages.length - 1];

/**
 * Run settings that let a scripted list of `calls` tool calls all run, approved, with the loop and
 * error guards out of the way (the escape suites plant one thing per call).
 */
export const everyCallRuns = (calls: number) => ({
  autoApprove: true,
  maxTurns: calls + 5,
  maxToolCalls: calls + 5,
  errorStreak: 1000,
  loopRepeatCommand: 1000,
  loopRepeatExplore: 1000,
  loopWindowCount: 1000,
  loopNoProgress: 1000,
  loopWobble: 1000,
  commandTimeoutMs: 20_000,
});

/** A command that takes three seconds, writing effects.log as it starts and as it ends. */
export const SLOW_COMMAND = `node -e "const f=require('fs');f.appendFileSync('effects.log','start\\n');setTimeout(()=>f.appendFileSync('effects.log','end\\n'),3000)"`;

/** The model runs the slow command, then says it did. */
export const slowStep = keelScript((req) =>
  req.turn === 0 ? calls(call("run_command", { command: SLOW_COMMAND })) : { content: "Ran it." },
);
