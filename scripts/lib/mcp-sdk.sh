#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK and inspector from the npm registry
# into a cache directory (by default <build>/mcp-sdk), for tests/test-mcp.mjs
# and bench/mcp.mjs. Quiet and fast when they are already there.
#   scripts/lib/mcp-sdk.sh [DIR]        or, sourced: install_mcp_sdk DIR

MCP_SDK_VERSION=${MCP_SDK_VERSION:-1.32.2}
MCP_INSPECTOR_VERSION=${MCP_INSPECTOR_VERSION:-0.15.0}

install_mcp_sdk () {
  local dir=$1
  local stamp="$dir/.installed-sdk-$MCP_SDK_VERSION-inspector-$MCP_INSPECTOR_VERSION"
  if [[ -f "$stamp" && -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" &&
        -f "$dir/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js" ]]; then
    return 0
  fi
  if ! command -v npm >/dev/null; then
    echo "mcp-sdk: npm is missing; scripts/install-deps installs nodejs and npm" >&2
    return 1
  fi
  mkdir -p "$dir"
  cat >"$dir/package.json" <<JSON
{ "name": "subagent-mcp-test-deps", "private": true,
  "dependencies": { "@modelcontextprotocol/sdk": "$MCP_SDK_VERSION",
                    "@modelcontextprotocol/inspector": "$MCP_INSPECTOR_VERSION" } }
JSON
  echo "mcp-sdk: installing @modelcontextprotocol/sdk@$MCP_SDK_VERSION and inspector@$MCP_INSPECTOR_VERSION into $dir"
  if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error >npm-install.log 2>&1); then
    echo "mcp-sdk: npm install failed:" >&2
    tail -n 20 "$dir/npm-install.log" >&2
    return 1
  fi
  rm -f "$dir"/.installed-sdk-*
  touch "$stamp"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  top=$(cd "$(dirname "$0")/../.." && pwd)
  install_mcp_sdk "${1:-$top/build/mcp-sdk}"
fi
