export const INTENT_SYSTEM = `You classify a request to a coding agent. Answer with JSON only.
<intents>
build: create new code or files ("Build a REST API endpoint", "write a script that ...")
modify: change existing code ("fix the failing test", "rename X", "add logging to Y")
analyze: examine or explain existing code without changing it ("analyse ./src", "explain how X works")
run: run a program or command ("run the tests", "start the server")
chat: a general question or conversation that needs no files
</intents>
<rule>Asking how to build something is analyze or chat, not build.</rule>`;
