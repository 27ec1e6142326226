#!/usr/bin/env bash
# Runs the edit engine benchmarks (bench/edits): the editor's replace (in
# process and over ACP through the cline-ls binary), the compact diff and
# apply_patch against python3, perl, GNU diff and git apply, on generated
# data, and prints Markdown tables for docs/BENCHMARKS.md. Arguments go to
# the program, e.g. -runs 41.
set -euo pipefail
cd "$(dirname "$0")/.."
export EDITS_BENCH_COMMAND="bench/edits.sh${*:+ $*}"
exec go run ./bench/edits "$@"
