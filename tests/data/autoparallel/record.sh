#!/bin/sh
# Records llama3_1layer_2x2.log: autoparallel (checkout in $1) optimizing a one-layer, 64-dim LLaMA-3 (its
# examples/example_llama3.py settings) on a fake 2x2 mesh on the CPU, under torch 2.15 ($PYTHON). Only
# autoparallel's own artifacts are kept (joint graph, optimizer log, solution); each record is whole, payload
# md5 included.
set -e
AP=${1:?usage: record.sh AUTOPARALLEL_CHECKOUT}
PYTHON=${PYTHON:-$HOME/.cache/jointscope/torch-2.15/bin/python}
HERE=$(cd "$(dirname "$0")" && pwd)
TRACE=$(mktemp -d)
"$PYTHON" "$HERE/../../../bench/autoparallel_llama3.py" --autoparallel "$AP" --trace-dir "$TRACE" \
    --layers 1 --mesh 2x2 --dim 64 --heads 4 --kv-heads 2 --vocab 128 --seqlen 16 --multiple-of 32 \
    --batch-per-dp 2 > "$HERE/llama3_1layer_2x2.run.json"
"$PYTHON" - "$TRACE"/*.log "$HERE/llama3_1layer_2x2.log" <<'PY'
import sys
keep, out = False, []
for line in open(sys.argv[1]):
    if not line.startswith("\t"):
        keep = '"artifact": {"name": "autoparallel_' in line
    if keep:
        out.append(line)
open(sys.argv[2], "w").writelines(out)
PY
rm -rf "$TRACE"
