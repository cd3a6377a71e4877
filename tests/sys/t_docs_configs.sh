#!/bin/bash
# Every config example in the docs starts as written (issue 20, item 5), and
# so does packaging/config.example.json, the example shipped with profd.
# Each ```json block of README.md and docs/*.md is either a config, marked on
# the line before it with
#     <!-- config: loaded by tests/sys/t_docs_configs.sh -->
# or something else (a reply, a body).  A marked block must be taken by
# `profd serve --config` and the daemon must serve /health with it (only
# "listen" is overridden, by --listen, so the test does not take a port in
# use); an unmarked block must be refused, so that a new config example
# cannot go untested by being left unmarked.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/serve.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
python3 - "$REPO" "$WORK/blocks" <<'PY'
import os, sys
repo, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
docs = ["README.md"] + sorted("docs/" + f for f in os.listdir(repo + "/docs") if f.endswith(".md"))
MARK = "<!-- config: loaded by tests/sys/t_docs_configs.sh -->"
n = 0
for doc in docs:
    lines = open(os.path.join(repo, doc)).read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```json":
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            prev = next((l.strip() for l in reversed(lines[:i]) if l.strip()), "")
            kind = "config" if prev == MARK else "other"
            n += 1
            name = f"{n:02d}.{kind}"
            open(f"{out}/{name}.json", "w").write("\n".join(lines[i + 1:j]) + "\n")
            open(f"{out}/{name}.where", "w").write(f"{doc}:{i + 1}\n")
            i = j
        i += 1
n += 1
open(f"{out}/{n:02d}.config.json", "w").write(open(repo + "/packaging/config.example.json").read())
open(f"{out}/{n:02d}.config.where", "w").write("packaging/config.example.json\n")
PY
nconf=0
nother=0
port=$(free_port 17970)
for f in "$WORK"/blocks/*.json; do
	where=$(cat "${f%.json}.where")
	case $f in
	*.config.json)
		serve "$port" --config "$f"
		call health GET /health
		expect_code health 200 "$where: /health"
		! grep -E '^profd: (error|cannot)' "$WORK/serve.err" ||
			fail "$where: the daemon logged an error with this config"
		kill "$SERVE_PID"
		wait "$SERVE_PID" || fail "$where: serve exited $? on SIGTERM"
		nconf=$((nconf + 1))
		echo "ok: $where starts and serves /health"
		;;
	*)
		# Refused at once: not a config, so it needs no mark.
		if timeout 20 "$PROFD" serve --listen 127.0.0.1:"$port" --config "$f" 2>"$WORK/other.err"; then
			fail "$where: a \`\`\`json block profd takes as a config has no config mark"
		fi
		grep -q "$f" "$WORK/other.err" ||
			fail "$where: refused, but not for its config: $(cat "$WORK/other.err")"
		nother=$((nother + 1))
		;;
	esac
done
[ "$nconf" -ge 4 ] || fail "only $nconf config examples found: are the marks gone?"
pass "$nconf config examples in the docs start as written; $nother other json blocks are not configs"
