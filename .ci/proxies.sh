#!/usr/bin/env bash
# Installs the proxies that the render end-to-end tests serve through, each pinned in a
# virtual environment of its own under .cache/proxies/ (the PyPI mcp-proxy needs mcp<2, the
# project uses mcp 2): a venv that already has the pinned version is left alone.
#
#   .ci/proxies.sh          # from anywhere; installs into <repo>/.cache/proxies
#   ROOT=/path .ci/proxies.sh
set -euo pipefail

ROOT="${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
PROXIES="$ROOT/.cache/proxies"
MCP_PROXY_VERSION=0.13.0 # PyPI mcp-proxy (sparfenyuk/mcp-proxy), target mcp-proxy-py
FASTMCP_VERSION=4.2.3    # FastMCP, target fastmcp

# install VENV PACKAGE VERSION SMOKE-IMPORT
install() {
  local venv="$PROXIES/$1" package="$2" version="$3" module="$4"
  local shown
  shown="$("$venv/bin/pip" show "$package" 2>/dev/null || true)"
  if grep -qx "Version: $version" <<<"$shown" && "$venv/bin/python" -c "import $module" 2>/dev/null; then
    return 0
  fi
  rm -rf "$venv"
  python3 -m venv "$venv"
  # pip's notes about index folders absent on this machine are noise; real errors still show.
  "$venv/bin/pip" install -q --disable-pip-version-check "$package==$version" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  "$venv/bin/python" -c "import $module" || {
    echo "$package $version did not install cleanly into $venv" >&2
    exit 1
  }
}

mkdir -p "$PROXIES"
install mcp-proxy-py mcp-proxy "$MCP_PROXY_VERSION" mcp_proxy
install fastmcp fastmcp "$FASTMCP_VERSION" fastmcp.server
