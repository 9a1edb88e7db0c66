/**
 * The agents under measurement: keel's coder graph (all five nodes) and the prebuilt agents a user
 * would otherwise pick, each with the same scripted model, the same read_file tool and a given
 * checkpointer.
 */
import { tool } from "@langchain/core/tools";
import { HumanMessage } from "@langchain/core/messages";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import { createAgent } from "langchain";
import { z } from "zod";
import { runConfig } from "../src/coder/context.js";
import { createCoderGraph } from "../src/coder/graph.js";
import { readFileTool } from "../src/tools/fs-tools.js";
import { ScriptedToolModel } from "./scripted-model.js";

export type AgentName = "keel" | "createAgent" | "prebuilt ReAct";
export const AGENTS: AgentName[] = ["keel", "createAgent", "prebuilt ReAct"];

/** One agent run: a stream of updates and the config to read its state again. */
export interface Runnable {
  stream(): Promise<AsyncIterable<unknown>>;
  getState(): Promise<unknown>;
}

export function buildAgent(
  name: AgentName,
  turns: number,
  saver: BaseCheckpointSaver,
  workspace: string,
  thread: string,
  /**
   * bench/steps.ts's: handlers that time each node, and a peer run at keel's durability ("sync":
   * each step on disk before the next); the timed benches give neither.
   */
  watch: { callbacks?: BaseCallbackHandler[]; peerDurability?: "sync" } = {},
): Runnable {
  const model = new ScriptedToolModel(turns);
  const callbacks = watch.callbacks ? { callbacks: watch.callbacks } : {};
  const request = "hello, read the notes one by one";
  if (name === "keel") {
    const graph = createCoderGraph({ createModel: () => model }).compile({ checkpointer: saver });
    const config = runConfig(thread, {
      workspace,
      maxTurns: turns + 5,
      maxToolCalls: turns + 5,
      loopWindowCount: 1000,
      loopNoProgress: 1000,
    });
    return {
      stream: () =>
        graph.stream(
          { messages: [new HumanMessage(request)] },
          { ...config, streamMode: "updates", ...callbacks },
        ),
      getState: () => graph.getState(config),
    };
  }
  const readFile = tool(
    async ({ path }: { path: string }) => {
      const r = await readFileTool.run(
        { path },
        { workspace, commandTimeoutMs: 1000, outputLimit: 16_000 },
      );
      return r.ok ? r.output : r.message;
    },
    {
      name: "read_file",
      description: readFileTool.description,
      schema: z.object({ path: z.string() }),
    },
  );
  const config = {
    configurable: { thread_id: thread },
    recursionLimit: turns * 3 + 20,
    ...(watch.peerDurability ? { durability: watch.peerDurability } : {}),
  };
  const graph =
    name === "createAgent"
      ? createAgent({ model, tools: [readFile], checkpointer: saver })
      : createReactAgent({ llm: model, tools: [readFile], checkpointSaver: saver });
  return {
    stream: () =>
      graph.stream(
        { messages: [new HumanMessage(request)] },
        { ...config, streamMode: "updates", ...callbacks },
      ) as Promise<AsyncIterable<unknown>>,
    getState: () => graph.getState(config),
  };
}
