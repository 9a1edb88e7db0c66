/**
 * The scripted model of `keel demo`. It makes the mistakes docs/DESIGN.md lists (F1–F8) and corrects
 * each one only after keel feeds the error back — the same reactive script style the tests use.
 * It is labelled as scripted wherever a person sees it.
 */
import type { ChatView, Script } from "../testing/fake-ollama/index.js";
import { call, calls, keelScript } from "../testing/script.js";

export const DEMO_REQUEST =
  "Build a REST API endpoint GET /users in src/api/users.js that returns the users as JSON, with a test in test/users.test.js";

const USERS_JS = `// GET /users: returns the list of users as JSON.
const users = [
  { id: 1, name: "Ada Lovelace" },
  { id: 2, name: "Alan Turing" },
];

export function listUsers(_req, res) {
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify(users));
}

export default { method: "GET", path: "/users", handler: listUsers };
`;

const USERS_TEST = `import assert from "node:assert/strict";
import { test } from "node:test";
import { listUsers } from "../src/api/users.js";

test("GET /users returns the users as JSON", () => {
  let body = "";
  const res = { setHeader() {}, end(b) { body = b; } };
  listUsers({}, res);
  assert.equal(JSON.parse(body).length, 2);
});
`;

const HEREDOC = `mkdir -p src/api && cat > src/api/users.js <<'EOF'\n${USERS_JS}EOF`;

/** The demo's model: reacts to the newest tool result or keel note in the conversation. */
export function createDemoScript(): Script {
  let overloaded = false;
  const act: Script = (req: ChatView) => {
    const lastTool = [...req.messages].reverse().find((m) => m.role === "tool")?.content ?? "";
    const last = req.last?.content ?? "";
    if (!lastTool) {
      if (last.startsWith("[keel] Your last reply was empty"))
        return calls(call("run_command", { command: HEREDOC }));
      if (last.startsWith("[keel] You described")) return { content: "" };
      return {
        content:
          "Sure! To build this you would create src/api/users.js exporting a handler that returns the users, then add a test for it.",
      };
    }
    if (lastTool.includes("run_command refused"))
      return calls(call("make_dir", { path: "src/api/users.js" }));
    if (lastTool.includes("looks like a file name"))
      return {
        ...calls(call("scaffold_endpoint", { route: "GET /users", file: "src/api/users.js" })),
        allowUnknownTools: true,
      };
    if (lastTool.includes('unknown tool "scaffold_endpoint"')) {
      if (!overloaded) {
        overloaded = true;
        return {
          fault: "status",
          status: 503,
          error: "server busy, please try again.  maximum pending requests exceeded",
        };
      }
      return calls(call("write_file", { path: "src/api/users.js" }));
    }
    if (lastTool.includes("invalid arguments for write_file")) {
      return {
        ...calls(
          call("create_file", { file_path: "src/api/users.js", text: USERS_JS }),
          call("write_file", { path: "test/users.test.js", content: USERS_TEST }),
        ),
        allowUnknownTools: true,
      };
    }
    if (lastTool.startsWith("created test/users.test.js"))
      return calls(call("list_dir", { path: "src/api" }));
    if (
      lastTool.startsWith("users.js") &&
      req.messages.filter((m) => m.role === "tool" && m.content.startsWith("users.js")).length === 1
    ) {
      return calls(call("list_dir", { path: ".\\src\\api" }));
    }
    if (lastTool.startsWith("users.js")) return calls(call("list_dir", { path: "src/api/" }));
    if (lastTool.includes("loop detected")) {
      return {
        content:
          "Done: src/api/users.js serves GET /users as JSON, and test/users.test.js checks it (run it with `node --test`).",
      };
    }
    return { content: "I am not sure what to do next." };
  };
  return keelScript(act, {
    plan: [
      "Write src/api/users.js with the GET /users handler",
      "Write test/users.test.js",
      "Check the files",
    ],
  });
}
