/** The intent rules: phrasings people type and the intent each gets, routing by the requested effect, and asksToRun. */
import { describe, expect, it } from "vitest";
import {
  classifyByRules,
  asksToRun,
} from "../../../../../src/coder/nodes/intent-classify/rules.js";
import { toolsForIntent } from "../../../../../src/tools/registry.js";
import { ASKS_TO_WRITE, ASKS_NOTHING } from "../../../../support/requests.js";

/** Phrasings people actually type, with the intent the rules must give (confidence ≥ 0.7). */
const TABLE: Array<[string, string]> = [
  // build
  ["Build a REST API endpoint with these specifications: GET /users returns JSON", "build"],
  [
    "Build a REST API endpoint with these specifications:\n- GET /users\n- POST /users\n- validation with zod",
    "build",
  ],
  ["Create a CLI that converts CSV to JSON", "build"],
  ["create src/api/users.js", "build"],
  ["  implement the login page", "build"],
  ["Write a script that renames photos by date", "build"],
  ["Generate a Dockerfile for this Node app", "build"],
  ["Scaffold a new Express project in ./server", "build"],
  ["Set up a vitest config", "build"],
  ["Make a React component that shows a user card", "build"],
  ["Add a /health endpoint", "build"],
  ["Write unit tests for the parser", "build"],
  ["Please create a README for this project", "build"],
  ["Can you build me a todo app in Flask?", "build"],
  ["Could you write a bash script that backs up ~/docs", "build"],
  ["I want you to implement a rate limiter", "build"],
  ["I need a REST endpoint that lists users", "build"],
  ["Let's build a small HTTP server in Go", "build"],
  ["# Task\nCreate a Python package `geo` with a haversine function", "build"],
  ["Task: write a GitHub Actions workflow that runs the tests", "build"],
  ["Develop a websocket chat server", "build"],
  ["Bootstrap a TypeScript library with tsup", "build"],
  ["Erstelle eine REST-API für Benutzer", "build"],
  ["Schreibe ein Python-Skript, das Dateien umbenennt", "build"],
  ["Crée une API REST pour les utilisateurs", "build"],
  ["Écris un script qui compte les lignes", "build"],
  ["Crea un endpoint REST para usuarios", "build"],
  ["Escribe una función que valide correos", "build"],
  ["Cria uma API REST de usuários", "build"],
  ["Scrivi uno script che legge un CSV", "build"],
  // modify
  ["Fix the failing test in test/api.test.ts", "modify"],
  ["fix the failing test", "modify"],
  ["Refactor src/cli into smaller modules", "modify"],
  ["Rename getUser to fetchUser everywhere", "modify"],
  ["Update the dependencies in package.json", "modify"],
  ["Change the port from 3000 to 8080", "modify"],
  ["Remove the unused imports", "modify"],
  ["Optimize the database query in users.ts", "modify"],
  ["Migrate the tests from jest to vitest", "modify"],
  ["Convert this module to ESM", "modify"],
  ["Add docstrings to utils.py", "modify"],
  ["Add error handling to src/server.ts", "modify"],
  ["Debug why the server crashes on startup", "modify"],
  ["Clean up the code in src/legacy", "modify"],
  ["Please fix the bug in the login form", "modify"],
  ["Can you refactor this function to be async?", "modify"],
  ["The login test fails with TypeError: undefined is not a function", "modify"],
  ["npm test is broken since the last commit", "modify"],
  ["Behebe den Fehler in der Anmeldung", "modify"],
  ["Corrige le bug dans le formulaire", "modify"],
  ["Arregla el test que falla", "modify"],
  ["Correggi il bug nel parser", "modify"],
  // analyze
  ["Deeply analyse a codebase into local folder .\\src", "analyze"],
  ["Analyze ./src", "analyze"],
  ["analyse the architecture of this repo", "analyze"],
  ["Review this code for security issues", "analyze"],
  ["explain how src/cli works", "analyze"],
  ["Describe the data flow in the payment module", "analyze"],
  ["Summarize what this project does", "analyze"],
  ["Walk me through the authentication code", "analyze"],
  ["What does src/cli/main.ts do?", "analyze"],
  ["How does the retry logic work in this codebase?", "analyze"],
  ["Why is the test failing?", "analyze"],
  ["Where is the config loaded?", "analyze"],
  ["Which files import the logger?", "analyze"],
  ["Audit the dependencies for known problems", "analyze"],
  ["Can you explain this function?", "analyze"],
  ["Tell me about the folder structure", "analyze"],
  ["Analysiere den Code in ./src", "analyze"],
  ["Erkläre, wie das Modul funktioniert", "analyze"],
  ["Explique le fonctionnement de ce module", "analyze"],
  ["Analiza el código de ./src", "analyze"],
  ["Explica cómo funciona este proyecto", "analyze"],
  ["Spiega come funziona questo file", "analyze"],
  // run
  ["Run the tests", "run"],
  ["run npm test and tell me what fails", "run"],
  ["Execute the migration script", "run"],
  ["Start the dev server", "run"],
  ["Lint the project", "run"],
  ["Please run the build", "run"],
  ["Führe die Tests aus", "run"],
  ["Lance les tests", "run"],
  ["Ejecuta las pruebas", "run"],
  // chat: general knowledge, even about building software (nothing in the workspace is involved)
  ["Explain how to build a REST API in Express", "chat"],
  ["What is the capital of France?", "chat"],
  ["hello", "chat"],
  ["Thanks!", "chat"],
  ["How do I become a better programmer?", "chat"],
  ["Why is the sky blue?", "chat"],
  ["Hola", "chat"],
];

/**
 * The kinds of miss found on held-out phrasings (issue 13), in the six languages: an overview of
 * this codebase, where something is in it, general knowledge that mentions building, a search over
 * the code, running something in the project, converting into a new file. The first block was
 * written before the rules were rebuilt (49 of 52 passed); the second was written after and before
 * any tuning on it (26 of 30 passed). Both are part of the table now.
 */
const KINDS: Array<[string, string]> = [
  // overview / explanation of this codebase → analyze
  ["Give me an overview of the architecture of this app", "analyze"],
  ["give me a high-level overview of how the code is organised", "analyze"],
  ["Can you give me a tour of the codebase?", "analyze"],
  ["I'd like an explanation of the module structure here", "analyze"],
  ["Gib mir einen Überblick über die Architektur dieses Projekts", "analyze"],
  ["Donne-moi une vue d'ensemble de l'architecture du projet", "analyze"],
  ["Dame una visión general de la arquitectura de este repositorio", "analyze"],
  ["Me dê uma visão geral da arquitetura deste projeto", "analyze"],
  ["Dammi una panoramica dell'architettura di questo progetto", "analyze"],
  // where is … in this repository → analyze
  ["Where is the database connection configured?", "analyze"],
  ["where are the routes defined", "analyze"],
  ["Where do we handle authentication errors?", "analyze"],
  ["Wo wird die Datenbank konfiguriert?", "analyze"],
  ["Où est définie la configuration du logger ?", "analyze"],
  ["¿Dónde se configura la base de datos?", "analyze"],
  ["Onde é configurado o banco de dados?", "analyze"],
  ["Dove viene caricata la configurazione?", "analyze"],
  // general knowledge that mentions building → chat
  ["Explain how to build a REST API in Flask", "chat"],
  ["explain closures in JavaScript", "chat"],
  ["Explain the difference between TCP and UDP", "chat"],
  ["How do I build a Docker image for a Go service?", "chat"],
  ["What is the best way to structure a React app?", "chat"],
  ["Erkläre Closures in JavaScript", "chat"],
  ["Explique comment construire une API REST avec Flask", "chat"],
  ["Explica cómo construir una API REST en Django", "chat"],
  ["Explique como funcionam as closures em JavaScript", "chat"],
  ["Spiega come costruire un'API REST con FastAPI", "chat"],
  // search over the code → analyze
  ["Find all TODO comments in the code", "analyze"],
  ["find every place where we call fetch", "analyze"],
  ["Check whether any function in utils is never called", "analyze"],
  ["Search for hard-coded passwords", "analyze"],
  ["List all the exported functions in src/lib", "analyze"],
  ["Finde alle Stellen, an denen die API aufgerufen wird", "analyze"],
  ["Trouve toutes les fonctions qui ne sont jamais appelées", "analyze"],
  ["Encuentra todos los TODO del proyecto", "analyze"],
  ["Encontre todas as funções não utilizadas", "analyze"],
  ["Trova tutte le funzioni mai chiamate", "analyze"],
  // run something in the project → run
  ["Install the dependencies", "run"],
  ["install dependencies and run the tests", "run"],
  ["Please start the server on port 3000", "run"],
  ["Installiere die Abhängigkeiten", "run"],
  ["Installe les dépendances", "run"],
  ["Instala las dependencias del proyecto", "run"],
  ["Instale as dependências", "run"],
  ["Installa le dipendenze", "run"],
  // convert and save as a new file → build
  ["Convert data.csv to JSON and save it as data.json", "build"],
  ["convert the README to HTML and write it to docs/index.html", "build"],
  ["Konvertiere data.csv in JSON und speichere es als data.json", "build"],
  ["Convertis data.csv en JSON et enregistre-le sous data.json", "build"],
  ["Convierte data.csv a JSON y guárdalo como data.json", "build"],
  ["Converta data.csv para JSON e salve como data.json", "build"],
  ["Converti data.csv in JSON e salvalo come data.json", "build"],

  ["Could you walk me through how requests flow through the middleware?", "analyze"],
  ["What's the overall design of this service?", "analyze"],
  ["Explain the purpose of the utils folder", "analyze"],
  ["where is the API key read from the environment?", "analyze"],
  ["In which file is the main function defined?", "analyze"],
  ["Wo ist der Logger definiert?", "analyze"],
  ["Où se trouve la fonction de connexion ?", "analyze"],
  ["¿En qué archivo está definida la ruta /users?", "analyze"],
  ["Explain how to build a CLI in Rust with clap", "chat"],
  ["What are generics in TypeScript?", "chat"],
  ["Explain recursion to a beginner", "chat"],
  ["Was ist der Unterschied zwischen let und const?", "chat"],
  ["Qu'est-ce qu'une closure en JavaScript ?", "chat"],
  ["¿Qué es una promesa en JavaScript?", "chat"],
  ["Cos'è una closure in Python?", "chat"],
  ["Look for any SQL built by string concatenation", "analyze"],
  ["Find the functions that have no tests", "analyze"],
  ["Check if any dependency is unused", "analyze"],
  ["Cerca tutte le chiamate a console.log", "analyze"],
  ["Install the Python requirements", "run"],
  ["Run the linter and show me the warnings", "run"],
  ["Installe toutes les dépendances avec npm", "run"],
  ["Export the users table to users.csv", "build"],
  ["Turn notes.md into a PDF called notes.pdf", "build"],
  ["Convert config.yaml to TOML and save the result as config.toml", "build"],
  ["Transforme data.xml en JSON et écris-le dans data.json", "build"],
  ["Create a Makefile with build and test targets", "build"],
  ["Fix the typo in the README", "modify"],
  ["Rename the folder utils to helpers", "modify"],
  ["Hi there!", "chat"],
];

/**
 * Kinds found by a probe of ~430 phrasings (issue: intent phrasings). Each was a confident wrong
 * verdict (mostly a request that needs files changed routed to read-only analysis or chat).
 */
const COMPOUND: Array<[string, string]> = [
  // a read or a question, then a change: the change is the work
  ["find the memory leak in cache.ts and fix it", "modify"],
  ["Why is the date test red? Fix it please.", "modify"],
  ["what's broken in the signup flow? can you repair it?", "modify"],
  ["review src/payments.ts and remove the dead branches", "modify"],
  ["Look at the flaky test in test/db.test.ts, then make it deterministic", "modify"],
  ["search for var declarations and replace them with const", "modify"],
  ["Something is off with the totals. Please investigate and fix.", "modify"],
  ["Explain the code in src/app.ts and add comments where it is unclear", "build"],
  ["Look at src/app.ts. The port is hardcoded. Read it from PORT instead.", "modify"],
  // run, then fix: the fix is the work
  ["run the unit tests and fix whatever fails", "modify"],
  ["Run the linter; fix the warnings.", "modify"],
  // polite forms and context before the act
  ["can u make a kanban board in vue", "build"],
  ["plz add a csv export button", "build"],
  ["Hi, please fix the broken logout", "modify"],
  ["hello! could you add a LICENSE to this repo?", "build"],
  ["In src/db.ts, rename connect to open", "modify"],
  ["For each file in lib/, add a copyright header", "modify"],
  ["1. Bump axios\n2. Fix the type errors", "modify"],
  [
    "Here is the function:\n```js\nconst f = (a) => a * 2\n```\nMake it handle strings too",
    "modify",
  ],
  [
    "We deploy on Heroku. The release fails on boot. Switch the start script to node dist/main.js.",
    "modify",
  ],
  ["Thanks. One more thing: rename the config file to app.config.json", "modify"],
  ["I'd like a script that resizes every image in a folder", "build"],
  // "make" an existing thing otherwise, and other change verbs
  ["make the sidebar collapsible", "modify"],
  ["make it work on Python 3.8", "modify"],
  ["Make sure the API returns 400 on bad input", "modify"],
  ["use pathlib instead of os.path in utils.py", "modify"],
  ["set the request timeout to 10 seconds", "modify"],
  ["Handle the empty-list case in average()", "modify"],
  ["Renombra la variable total a suma", "modify"],
  ["Rinomina la classe User in Account", "modify"],
  ["¿Por qué falla el build? Arréglalo", "modify"],
  // git and shell commands are runs
  ["create a branch named hotfix/login", "run"],
  ["Commit the changes with the message 'fix typo'", "run"],
  ["npm run build", "run"],
  ["pip install requests", "run"],
  // German modal with the verb last, Italian infinitive after a modal
  ["Kannst du bitte ein Skript schreiben, das alte Logs löscht?", "build"],
  ["Puoi creare una pagina di registrazione?", "build"],
  // general knowledge stays chat, even with "and" and a build verb in it
  ["Explain how to create a React app and deploy it to Netlify", "chat"],
  ["How do I build a Docker image and push it to a registry?", "chat"],
  ["Describe the difference between merge and rebase", "chat"],
  ["hey there", "chat"],
  ["perfect, thank you!", "chat"],
  // questions about this workspace
  ["Which version of express do we use?", "analyze"],
  ["Is there a Dockerfile in the repo?", "analyze"],
  ["Investigate the slow startup and tell me what causes it", "analyze"],
];

/** Where the wording cannot tell, the rules are unsure and the model decides. */
const UNSURE = [
  "Write a poem about autumn",
  "draft an email to the team about the outage",
  "write me a limerick about TypeScript",
  "build it",
  "Would you mind writing a Dockerfile for this app?",
  "Explain the import and export logic in src/io.ts",
  "Summarize the architecture in ARCHITECTURE.md",
  "Explain closures. Then write an example.",
  "do it",
  "Wat doet dit project?",
  "Hoe werkt deze code?",
  "Napraw błąd w logowaniu",
  "Исправь ошибку в парсере",
  "Goals: faster startup, less memory. Start with the config loader.",
];

describe("classifyByRules", () => {
  it("has a table of at least 80 phrasings", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(80);
  });

  it.each([...TABLE, ...KINDS])("%j → %s", (text, intent) => {
    const v = classifyByRules(text);
    expect(v.intent).toBe(intent);
    expect(v.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it.each(COMPOUND)("%j → %s", (text, intent) => {
    const v = classifyByRules(text);
    expect(v.intent).toBe(intent);
    expect(v.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it.each(UNSURE)("is unsure about %j", (text) => {
    expect(classifyByRules(text).confidence).toBeLessThan(0.7);
  });

  it("writing prose with a file named for it is a build", () => {
    expect(classifyByRules("Write a poem about autumn and save it to poem.txt")).toEqual({
      intent: "build",
      confidence: 0.85,
    });
  });

  it.each(["the thing with the users table", "users table migration", "ok so about the frontend"])(
    "is unsure about %j",
    (text) => {
      expect(classifyByRules(text).confidence).toBeLessThan(0.7);
    },
  );
});

describe("routing by the requested effect", () => {
  for (const [request] of ASKS_TO_WRITE) {
    it(`a toolset with write_file: ${request}`, () => {
      const v = classifyByRules(request);
      expect(v.confidence).toBeGreaterThanOrEqual(0.7);
      expect(toolsForIntent(v.intent, [], false).map((t) => t.name)).toContain("write_file");
    });
  }
  it("a question that asks for nothing stays read-only analysis", () => {
    for (const request of ["which module exports the logger?", ...ASKS_NOTHING.slice(0, 5)]) {
      const v = classifyByRules(request);
      expect(v.intent === "analyze" || v.intent === "chat").toBe(true);
      expect(toolsForIntent(v.intent, [], false).map((t) => t.name)).not.toContain("write_file");
    }
  });
});

describe("asksToRun: a request that asks for something to be run", () => {
  it.each([
    "Create hi.sh that prints hi, then run it",
    "Fix the failing test in parse.py and run the tests",
    "can you run the tests?",
    "Install lodash and use it in utils.js",
    "Write hello.py and execute it",
    "Erstelle hallo.py und führe es aus",
    "Create a branch called feature-x",
  ])("asks: %s", (request) => expect(asksToRun(request)).toBe(true));
  it.each([
    "How do I run the tests?",
    "Explain how to run the tests",
    "What does npm test run?",
    "Write a Makefile with install and test targets",
    "Write a function that runs the tests",
    "Install instructions: write them to INSTALL.md",
    "Stop using var in app.js",
    "npm test fails, fix it",
  ])("does not: %s", (request) => expect(asksToRun(request)).toBe(false));
});
