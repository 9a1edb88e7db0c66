/**
 * The planning question. It is asked at the end of act's own prompt (same system prompt, tools and
 * conversation), so it says only what planning needs. It names no example file: small models copy
 * an example's path into their plan and then write it.
 */
export const PLAN_ASK = (intent: string, replanReason?: string, previous?: string[]) =>
  [
    `[keel] Before acting, plan this ${intent} request. Answer with JSON only: 1 to 6 short, concrete steps, each one action that names the files or command it uses, as the request names them.`,
    `<rules>
- Creating a file is one step that writes it with its full content; never a step that creates a folder named like a file.
- For analysis, steps read and inspect; they change nothing.
- No step may repeat an earlier one.
</rules>`,
    replanReason
      ? `<previous_plan>\n${(previous ?? []).map((s, i) => `${i + 1}. ${s}`).join("\n")}\n</previous_plan>\n<what_went_wrong>\n${replanReason}\n</what_went_wrong>\nMake a new plan that avoids this.`
      : "",
  ]
    .filter(Boolean)
    .join("\n");
