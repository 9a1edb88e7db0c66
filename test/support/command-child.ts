/**
 * A keel process that only runs one sandboxed command (`node --import tsx command-child.ts
 * <workspace> <command>`), for tests that kill it mid-command.
 */
import { ALL_TOOLS } from "../../src/tools/registry.js";

const [workspace, command] = process.argv.slice(2);
const runCommand = ALL_TOOLS.find((t) => t.name === "run_command")!;
await runCommand.run(
  { command: command! },
  { workspace: workspace!, commandTimeoutMs: 120_000, outputLimit: 16_000 },
);
