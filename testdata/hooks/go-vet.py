#!/usr/bin/env python3
"""A Claude Code PostToolUse hook (matcher "Edit|Write|MultiEdit").

After a Go file is edited, runs `go vet ./...` in the session's folder
and, when vet complains, hands its report to the model as additional
context. Whatever goes wrong here (no go, no module) says nothing: a
checker that cannot check must not get in the way of the edit.
"""
import json
import os
import subprocess
import sys

event = json.load(sys.stdin)
path = event.get("tool_input", {}).get("file_path", "")
cwd = event.get("cwd") or os.getcwd()
if not path.endswith(".go") or not os.path.isfile(os.path.join(cwd, "go.mod")):
    sys.exit(0)
try:
    vet = subprocess.run(["go", "vet", "./..."], cwd=cwd, capture_output=True, text=True, timeout=120)
except (OSError, subprocess.TimeoutExpired):
    sys.exit(0)
if vet.returncode == 0:
    sys.exit(0)
report = (vet.stdout + vet.stderr).strip()
print(json.dumps({"hookSpecificOutput": {
    "hookEventName": "PostToolUse",
    "additionalContext": "go vet ./... after the edit reports:\n" + report,
}}))
