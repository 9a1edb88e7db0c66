/**
 * A long reading thread, as the long-thread tests run it with the bench's scripted model
 * (bench/scripted-model.ts: each turn reads the next note).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runConfig } from "../../src/coder/context.js";
import { tempWorkspace } from "./harness.js";

/** A fresh workspace of `files` notes, `notes/n0.txt`…, twenty lines each. */
export function notesWorkspace(files: number): string {
  const ws = tempWorkspace();
  mkdirSync(path.join(ws, "notes"));
  for (let i = 0; i < files; i++)
    writeFileSync(path.join(ws, `notes/n${i}.txt`), `note ${i}\n`.repeat(20));
  return ws;
}

/** The config of a `turns`-turn reading thread: no turn, call or loop guard ends it first. */
export const readingRunConfig = (thread: string, workspace: string, turns: number) =>
  runConfig(thread, {
    workspace,
    maxTurns: turns + 5,
    maxToolCalls: turns + 5,
    loopWindowCount: 1000,
    loopNoProgress: 1000,
  });
