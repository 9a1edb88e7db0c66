/** The file tools' gate (coder/nodes/tool-gate.ts) asked of one write, with no person there. */
import type { NodeEnv } from "../../src/coder/runtime.js";
import { gate } from "../../src/coder/nodes/tool-gate.js";

/**
 * What the gate does with `write_file rel` (`content` written) under `--yes`, auto mode and an
 * allow-all rule, nobody there to ask: "run", or the message of the refusal.
 */
export function gateDecision(workspace: string, rel: string, content = "x\n"): string {
  const env = {
    workspace,
    settings: {
      approval: "auto",
      autoApprove: true,
      interactive: false,
      allowRules: ["*"],
      askRules: [],
      denyRules: [],
    },
    emit: () => {},
  } as unknown as NodeEnv;
  const v = gate({ tool: "write_file", toolClass: "mutate", path: rel }, env, content, {
    content,
  });
  return v.run ? "run" : v.result.ok ? "run" : v.result.message;
}
