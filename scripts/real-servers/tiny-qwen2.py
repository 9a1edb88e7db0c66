"""Writes a tiny qwen2 GGUF with random weights and the real Qwen2 tokenizer and Qwen2.5-Instruct
chat template, as a fast deterministic fixture for llama-server and Ollama.

usage: tiny-qwen2.py <llama.cpp clone> <output.gguf>

The tokenizer comes from the clone's models/ggml-vocab-qwen2.gguf; Qwen2.5's 19 added tokens are
restored at ids 151646-151664 so that <tool_call> (151657) is one token, as in the real model.
"""
import sys
from pathlib import Path

import numpy as np

clone, out = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(clone / "gguf-py"))
import gguf  # noqa: E402

CONTROL, USER_DEFINED = gguf.TokenType.CONTROL, gguf.TokenType.USER_DEFINED
# Qwen2.5's added tokens after <|im_end|> (151645); the "special: false" ones are rendered as text.
ADDED = [
    ("<|object_ref_start|>", CONTROL), ("<|object_ref_end|>", CONTROL),
    ("<|box_start|>", CONTROL), ("<|box_end|>", CONTROL),
    ("<|quad_start|>", CONTROL), ("<|quad_end|>", CONTROL),
    ("<|vision_start|>", CONTROL), ("<|vision_end|>", CONTROL),
    ("<|vision_pad|>", CONTROL), ("<|image_pad|>", CONTROL), ("<|video_pad|>", CONTROL),
    ("<tool_call>", USER_DEFINED), ("</tool_call>", USER_DEFINED),
    ("<|fim_prefix|>", USER_DEFINED), ("<|fim_middle|>", USER_DEFINED),
    ("<|fim_suffix|>", USER_DEFINED), ("<|fim_pad|>", USER_DEFINED),
    ("<|repo_name|>", USER_DEFINED), ("<|file_sep|>", USER_DEFINED),
]
FIRST_ADDED = 151646

vocab = gguf.GGUFReader(clone / "models" / "ggml-vocab-qwen2.gguf")
field = vocab.fields
tokens = list(field["tokenizer.ggml.tokens"].contents())
types = list(field["tokenizer.ggml.token_type"].contents())
merges = list(field["tokenizer.ggml.merges"].contents())
for i, (text, kind) in enumerate(ADDED):
    tokens[FIRST_ADDED + i] = text
    types[FIRST_ADDED + i] = int(kind)
template = (clone / "models" / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text()

# A context of 131,072 tokens: the bench's never-folding peers reach ~60,000 over 80 reads, and the
# weights are random anyway (only prefill cost is measured); keel asks for its own window.
n_vocab, n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx = len(tokens), 64, 2, 4, 2, 128, 131072
head = n_embd // n_head
w = gguf.GGUFWriter(str(out), "qwen2")
w.add_name("keel tiny qwen2 (random weights, real Qwen2 tokenizer)")
w.add_context_length(n_ctx)
w.add_embedding_length(n_embd)
w.add_block_count(n_layer)
w.add_feed_forward_length(n_ff)
w.add_head_count(n_head)
w.add_head_count_kv(n_head_kv)
w.add_rope_freq_base(1000000.0)
w.add_layer_norm_rms_eps(1e-6)
w.add_file_type(gguf.LlamaFileType.ALL_F32)
w.add_tokenizer_model("gpt2")
w.add_tokenizer_pre("qwen2")
w.add_token_list(tokens)
w.add_token_types(types)
w.add_token_merges(merges)
w.add_bos_token_id(151643)
w.add_eos_token_id(151645)
w.add_pad_token_id(151643)
w.add_add_bos_token(False)
w.add_chat_template(template)

rng = np.random.default_rng(24)


def rand(*shape):
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


w.add_tensor("token_embd.weight", rand(n_vocab, n_embd))
w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
w.add_tensor("output.weight", rand(n_vocab, n_embd))
for i in range(n_layer):
    p = f"blk.{i}."
    w.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
    w.add_tensor(p + "attn_q.weight", rand(n_embd, n_embd))
    w.add_tensor(p + "attn_q.bias", np.zeros(n_embd, dtype=np.float32))
    w.add_tensor(p + "attn_k.weight", rand(n_head_kv * head, n_embd))
    w.add_tensor(p + "attn_k.bias", np.zeros(n_head_kv * head, dtype=np.float32))
    w.add_tensor(p + "attn_v.weight", rand(n_head_kv * head, n_embd))
    w.add_tensor(p + "attn_v.bias", np.zeros(n_head_kv * head, dtype=np.float32))
    w.add_tensor(p + "attn_output.weight", rand(n_embd, n_embd))
    w.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
    w.add_tensor(p + "ffn_gate.weight", rand(n_ff, n_embd))
    w.add_tensor(p + "ffn_up.weight", rand(n_ff, n_embd))
    w.add_tensor(p + "ffn_down.weight", rand(n_embd, n_ff))

tmp = out.with_suffix(".tmp")
w.path = tmp
w.write_header_to_file(path=tmp)
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
tmp.rename(out)
print(out)
