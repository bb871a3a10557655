# Source this file: installs the real Claude Code, Codex and MCP Inspector CLIs with npm (outside the
# repository) and exports ZAXY_TEST_NODE_BIN / ZAXY_MCP_INSPECTOR, so the real-client tests run instead of
# skipping. Best effort: without npm, or when the install fails, it says why and those tests skip.
# Versions are pinned: the tests check these clients' hook and config formats.

zaxy_ci_clients() {
    local prefix="${ZAXY_CI_CLIENTS_DIR:-${TMPDIR:-/tmp}/zaxy-ci-clients}"
    local packages=(
        "@anthropic-ai/claude-code@2.1.197"
        "@openai/codex@0.169.0"
        "@modelcontextprotocol/inspector@0.15.0"
    )
    if ! command -v npm >/dev/null 2>&1; then
        echo "clients: WARNING npm not found; the real-client tests will skip"
        return 0
    fi
    if ! timeout 600 npm install --prefix "${prefix}" --no-audit --no-fund --silent "${packages[@]}" >/dev/null 2>&1; then
        echo "clients: WARNING npm install failed; the real-client tests will skip"
        return 0
    fi
    export ZAXY_TEST_NODE_BIN="${prefix}/node_modules/.bin"
    export ZAXY_MCP_INSPECTOR="${prefix}/node_modules/.bin/mcp-inspector"
    echo "clients: claude, codex and mcp-inspector in ${ZAXY_TEST_NODE_BIN}"
}
