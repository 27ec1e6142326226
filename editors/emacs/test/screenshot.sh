#!/bin/sh
# Takes the README's screenshots: a real cline.el session in a terminal
# Emacs under tmux, the user's keys typed through tmux, the replay model.
# Writes doc/chat-approval.txt and doc/chat-done.txt (tmux captures).
#
#   editors/emacs/test/screenshot.sh      (from anywhere; needs go, emacs, tmux)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'tmux kill-session -t cline-demo 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/ws" "$tmp/state" "$tmp/signal" "$tmp/home"
printf 'hello\n' > "$tmp/ws/hello.txt"
(cd "$here/../.." && go build -o "$tmp/cline-ls" ./cmd/cline-ls)

wait_for() { # wait_for FILE: until the demo signals that stage
  i=0
  while [ ! -e "$tmp/signal/$1" ]; do
    i=$((i + 1)); [ $i -lt 600 ] || { echo "no $1 stage; the screen:" >&2; tmux capture-pane -p -t cline-demo >&2; exit 1; }
    sleep 0.1
  done
}

tmux new-session -d -s cline-demo -x 100 -y 30 \
  "cd '$tmp/ws' && HOME='$tmp/home' TERM=xterm-256color CLINE_LS='$tmp/cline-ls' \
   CLINE_TEST_WORKSPACE='$tmp/ws' CLINE_TEST_TRANSCRIPT='$here/testdata/approve.json' \
   CLINE_TEST_STATE='$tmp/state' CLINE_DEMO_SIGNAL='$tmp/signal' \
   emacs -nw -Q -l '$here/test/demo.el'"
wait_for ready
tmux send-keys -t cline-demo -l 'Greet the world in hello.txt'
tmux send-keys -t cline-demo C-c C-c
wait_for approval
tmux capture-pane -p -t cline-demo | sed 's/[[:space:]]*$//' > "$here/doc/chat-approval.txt"
tmux send-keys -t cline-demo C-c C-a
tmux send-keys -t cline-demo a
wait_for done
tmux capture-pane -p -t cline-demo | sed 's/[[:space:]]*$//' > "$here/doc/chat-done.txt"
echo "wrote $here/doc/chat-approval.txt and $here/doc/chat-done.txt"
