#!/bin/sh
# Takes the README's screenshots: a real Neovim in tmux, the plugin with
# its defaults, the daemon built from this tree and no API key, only
# CLINE_LS_TRANSCRIPT (the first-run path the README describes), on the
# demo workspace of `cline-ls demo`. Writes the captures to $1 (default
# ./screenshots). Needs nvim, tmux and go.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
trap 'tmux -S "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT

mkdir -p "$tmp/bin" "$tmp/greet"
(cd "$repo" && go build -o "$tmp/bin/cline-ls" ./cmd/cline-ls)
# The demo workspace, out of its txtar archive.
awk -v dir="$tmp/greet" '
  /^-- .* --$/ { f = dir "/" $2; next }
  f != "" { print > f }
' "$repo/cmd/cline-ls/demo/workspace.txtar"

tmux -S "$sock" new-session -d -x 132 -y 34 -s shot \
  env -i HOME="$tmp" PATH="$tmp/bin:/usr/bin:/bin" TERM=xterm-256color \
  XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data" \
  CLINE_LS_TRANSCRIPT="$repo/cmd/cline-ls/demo/transcript.json" \
  sh -c "cd '$tmp/greet' && nvim -u NONE -i NONE -n --cmd 'set rtp^=$here' --cmd 'runtime plugin/cline.lua' --cmd 'syntax on' greet.go"

# wait_for waits for text on the screen.
wait_for() {
  i=0
  while ! tmux -S "$sock" capture-pane -p -t shot | grep -qF -- "$1"; do
    i=$((i + 1))
    if [ $i -gt 300 ]; then
      echo "timed out waiting for: $1" >&2
      tmux -S "$sock" capture-pane -p -t shot >&2
      exit 1
    fi
    sleep 0.1
  done
}
keys() { tmux -S "$sock" send-keys -t shot "$@"; }

wait_for 'greet.go'
keys ':ClinePlan the test fails, why?' Enter
wait_for '-- end_turn'
# Act mode, then the follow-up typed in the session buffer's prompt area.
keys ':ClineMode act' Enter
wait_for 'mode: act'
keys ':ClineOpen' Enter
keys G i 'Go ahead.' Escape Enter
wait_for 'Cline asks: Edit greet.go'
tmux -S "$sock" capture-pane -p -t shot >"$out/nvim-approval.txt"
keys ':ClineApprove' Enter
keys a
wait_for 'session 10.0k'
tmux -S "$sock" capture-pane -p -t shot >"$out/nvim-done.txt"
keys Escape ':qall!' Enter
echo "wrote $out/nvim-approval.txt and $out/nvim-done.txt"
