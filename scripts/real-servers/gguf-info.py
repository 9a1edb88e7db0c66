"""Prints what a GGUF file really holds, as one JSON object: architecture, name, size label,
context length, tensor count, vocabulary size and whether it carries a chat template.

usage: gguf-info.py <llama.cpp clone> <file.gguf>
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(sys.argv[1]) / "gguf-py"))
from gguf import GGUFReader  # noqa: E402

reader = GGUFReader(sys.argv[2])
fields = reader.fields


def get(key):
    field = fields.get(key)
    return None if field is None else field.contents()


arch = get("general.architecture")
tokens = fields.get("tokenizer.ggml.tokens")
print(json.dumps({
    "architecture": arch,
    "name": get("general.name"),
    "sizeLabel": get("general.size_label"),
    "contextLength": get(f"{arch}.context_length"),
    "tensors": len(reader.tensors),
    "vocab": None if tokens is None else len(tokens.data),
    "chatTemplate": get("tokenizer.chat_template") is not None,
}))
