import { describe, expect, it } from "vitest";
import { classifyByRules } from "../../src/agent/nodes/intent-classify/rules.js";

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
  ["Explain how to build a REST API in Express", "analyze"],
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
  // chat
  ["What is the capital of France?", "chat"],
  ["hello", "chat"],
  ["Thanks!", "chat"],
  ["How do I become a better programmer?", "chat"],
  ["Why is the sky blue?", "chat"],
  ["Hola", "chat"],
];

describe("classifyByRules", () => {
  it("has a table of at least 80 phrasings", () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(80);
  });

  it.each(TABLE)("%j → %s", (text, intent) => {
    const v = classifyByRules(text);
    expect(v.intent).toBe(intent);
    expect(v.confidence).toBeGreaterThanOrEqual(0.7);
  });

  it.each(["the thing with the users table", "users table migration", "ok so about the frontend"])(
    "is unsure about %j",
    (text) => {
      expect(classifyByRules(text).confidence).toBeLessThan(0.7);
    },
  );
});
