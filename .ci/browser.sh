# Source this file: makes a headless Chromium and its driver available for the Memory Inspector's browser tests
# (tests/ui/test_browser.py). Best effort and idempotent: keeps what is installed; otherwise, as root with apt,
# installs Debian's `chromium` and `chromium-driver`. When neither works it says why and those tests skip (they
# name the packages to install).

zaxy_ci_browser() {
    if command -v chromedriver >/dev/null 2>&1 && { command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; }; then
        echo "browser: using the installed chromium and chromedriver"
        return 0
    fi
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "browser: installing the chromium and chromium-driver packages"
        apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq chromium chromium-driver >/dev/null 2>&1 || true
    fi
    if command -v chromedriver >/dev/null 2>&1; then
        echo "browser: $(chromedriver --version 2>/dev/null | head -n 1)"
    else
        echo "browser: WARNING no chromium/chromedriver (not root or no apt); the inspector's browser tests will skip"
    fi
}
