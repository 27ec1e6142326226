#!/usr/bin/env bash
# Compares the search engine behind search_codebase (tools/search) with
# ripgrep on Go's own source tree: a literal, a word regexp and a
# case-insensitive alternation, each run several times by both with the
# same options (ignore files honoured, hidden files searched, one line of
# context, every match kept). Prints a markdown table with the median
# (and fastest) wall times and the ratio cline-ls/rg.
#
#   bench/search.sh                 # Go's tree, 7 runs each
#   RUNS=11 bench/search.sh DIR     # another tree, more runs
#   bench/search.sh DIR 'query' ... # other queries
#
# The engine alone, without process start or the walk:
#   go test ./tools/search -run XXX -bench .
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v rg >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		echo "installing ripgrep from Debian..." >&2
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null
	else
		echo "ripgrep (rg) is needed: apt-get install -y ripgrep, as root" >&2
		exit 1
	fi
fi

root="${1:-$(go env GOROOT)/src}"
shift || true
echo "ripgrep: $(rg --version | head -1); $(nproc) CPUs; $(go version)"
exec go run ./bench/search -root "$root" -runs "${RUNS:-7}" "$@"
