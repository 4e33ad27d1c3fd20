#!/usr/bin/env bash
# Installs what the interop tests run, when missing: the Node 22 tools of test/interop/package.json
# (the conformance suite, the MCP Inspector, Node 22 itself) into test/interop/node_modules, and the
# MCP Python SDK into the virtualenv test/interop/.venv. The root node_modules is never touched.
# When pip cannot install the SDK this says why and carries on: the Python tests then skip (fail under CI=true).
set -euo pipefail
cd "$(dirname "$0")"

# Reinstalled when the lockfile is newer than the install (a version bump), not only when missing.
if [ ! -x node_modules/.bin/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi

if [ ! -x .venv/bin/python ] || [ requirements.txt -nt .venv/installed ] || ! .venv/bin/python -c 'import mcp' 2>/dev/null; then
  # pip's retry warnings for an unreachable index would drown the test log: shown only on failure.
  log=$(mktemp)
  if /usr/bin/python3 -m venv .venv >"$log" 2>&1 && .venv/bin/pip install -q --retries 2 -r requirements.txt >>"$log" 2>&1; then
    touch .venv/installed
    echo "interop: MCP Python SDK installed in test/interop/.venv"
  else
    tail -n 5 "$log" >&2
    echo "interop: could not install the MCP Python SDK into test/interop/.venv (no python3-venv, or no package index) — hint: the Python client tests skip (fail under CI=true) until \`bash test/interop/setup.sh\` succeeds" >&2
  fi
  rm -f "$log"
fi
