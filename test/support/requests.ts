/**
 * Requests people type, for the tests of what a request asks for (coder/requested-effect.ts) and of
 * how the rules route it (coder/nodes/intent-classify/rules.ts).
 */

/** Questions and analyses that also ask for a file, and the file each names (null: "a file"). */
export const ASKS_TO_WRITE: Array<[string, string | null]> = [
  ["which module exports the logger? put the answer in notes.md", "notes.md"],
  ["Which module exports the logger? Put the answer in notes.md.", "notes.md"],
  ["Find all TODO comments and write them to todos.md", "todos.md"],
  ["List the HTTP routes, save the list as docs/routes.md", "docs/routes.md"],
  ["What does src/cli/main.ts do? Write a short summary into SUMMARY.md", "SUMMARY.md"],
  ["Which files import lodash? Please record your findings in FINDINGS.md", "FINDINGS.md"],
  ["How is the database configured? Note it down in `db-notes.txt`", "db-notes.txt"],
  ["Where is auth handled? Save the answer to ./answers/auth.md", "answers/auth.md"],
  ["Review src/app.ts (write your notes to review.md)", "review.md"],
  ["Is there dead code in src/? If so, dump the list into dead.txt", "dead.txt"],
  ["What is a closure in JavaScript? Then append the explanation to learn.md", "learn.md"],
  ["Which functions are unused? and update CHANGELOG.md with them", "CHANGELOG.md"],
  ["Explain the build pipeline; store the explanation in docs/build.md", "docs/build.md"],
  ["Count the tests per folder and put the table in a file called counts.csv", "counts.csv"],
  ["Summarise README.md, then write it to summary.txt", "summary.txt"],
  ["How many tests are there? Save it to a file.", null],
  ["Analyse the error handling and write your findings into a new markdown file", null],
  ["Welches Modul exportiert den Logger? Schreibe die Antwort in notes.md", "notes.md"],
  ["Quel module exporte le logger ? Écris la réponse dans notes.md", "notes.md"],
  ["¿Qué módulo exporta el logger? Guarda la respuesta en notes.md", "notes.md"],
  ["Qual módulo exporta o logger? Salve a resposta em notes.md", "notes.md"],
  ["Quale modulo esporta il logger? Scrivi la risposta in notes.md", "notes.md"],
  // where the result goes, said without a write verb, or with "answer"/"reply"
  ["Which files import lodash? Answer in answers.md", "answers.md"],
  ["What does parse.py do? Reply in a file called reply.txt", "reply.txt"],
  ["List the TODOs. Output: todos.txt", "todos.txt"],
  ["Which endpoints exist? I want the list in endpoints.md", "endpoints.md"],
  ["Find unused exports; the results should go to unused.txt", "unused.txt"],
  ["Give me a summary of the repo as summary.md", "summary.md"],
  ["make a file named todo.md with three items", "todo.md"],
  ["Lies README.md und schreibe eine Zusammenfassung in summary.md", "summary.md"],
  ["Lis README.md et écris un résumé dans resume.md", "resume.md"],
];

/** Requests that mention files and writing, and ask for nothing to be written. */
export const ASKS_NOTHING = [
  "where do we save the config to settings.json?",
  "which module writes to app.log?",
  "Explain how we load and save settings to config.json",
  "summarize the changes in CHANGELOG.md",
  "list the endpoints in src/routes.ts",
  "Does node.js support ESM? e.g. in package.json",
  "What does the export in src/index.ts do?",
  "How does the logger write to stderr?",
  "Why does `npm run build` put the output in dist/index.js?",
  "where is the output file out.json created?",
  "How do I write to a file in Python, e.g. data.txt?",
  "Explain what put_item in db.py does",
  "the logger should write to app.log, why does it not?",
];
