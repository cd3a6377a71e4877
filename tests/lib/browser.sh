# Headless Chromium for the tests that look at pages and flamegraphs.
# Source it after common.sh; it provides `browser ARGS...`, which runs
# tests/lib/browser.js with Debian's chromium through playwright-core.
# playwright-core comes from the npm registry, installed once into
# $BUILD/npm (idempotent; nothing is vendored); Chromium is Debian's
# (scripts/deps.sh --test).  Skips the test when either can't be had.
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || { echo "skip: no chromium (make test-deps)"; exit 77; }
command -v node >/dev/null || { echo "skip: no node (make test-deps)"; exit 77; }
BROWSER_NPM=$BUILD/npm
if [ ! -f "$BROWSER_NPM/node_modules/playwright-core/package.json" ]; then
	command -v npm >/dev/null || { echo "skip: no npm (make test-deps)"; exit 77; }
	mkdir -p "$BROWSER_NPM"
	npm install --prefix "$BROWSER_NPM" --no-audit --no-fund --loglevel=error \
		playwright-core@1 >&2 || { echo "skip: npm install playwright-core failed"; exit 77; }
fi
export CHROMIUM NODE_PATH=$BROWSER_NPM/node_modules

# browser MODE ARGS...: see tests/lib/browser.js.  A fresh profile directory
# each run, under $WORK, so runs share nothing.
browser() {
	BROWSER_PROFILE_DIR=$(mktemp -d "$WORK/chromium.XXXXXX") \
		timeout 120 node "$TESTS/lib/browser.js" "$@"
}
