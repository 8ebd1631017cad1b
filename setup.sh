#!/usr/bin/env bash
# Create .venv and install factprobe into it.
#   bash setup.sh          -> the package with the parts the main job uses
#   bash setup.sh dev      -> the same plus everything the tests need
# The CPU build of torch goes in first, pinned to the one this machine carries, so that no
# dependency resolves torch to a CUDA build; the package itself only asks for a range.
set -euo pipefail
cd "$(dirname "$0")"
extras="${1:-}"
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "torch==2.13.0"
if [ "$extras" = "dev" ]; then
    .venv/bin/python -m pip install -q -e ".[dev]"
else
    .venv/bin/python -m pip install -q -e .
fi
