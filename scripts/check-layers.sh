#!/bin/bash
# check-layers: fails, naming file:line, on an #include that runs up or
# sideways against src/LAYERS (`make check-layers`, run by `make test`).
#
#   scripts/check-layers.sh [ROOT]    check ROOT (default: this checkout)
#   scripts/check-layers.sh --self-test
#                                     plant bad includes in a copy of src/
#                                     and tests/unit/ (and a file that is not
#                                     there in docs/architecture.md's tree),
#                                     and fail unless each is caught at its
#                                     file:line
#
# The rules, for src/LAYER/* and for tests/unit/LAYER/* (a layer's tests see
# what the layer sees, and a helper header beside them, "x.h"):
#   - "L/..." is fine from the layer itself and from the layers src/LAYERS
#     lists after LAYER:, nothing else;
#   - user space includes only the wire contract of the kernel side,
#     bpf/abi/*.h, never bpf/*.bpf.h;
#   - the generated skeleton, bpf/profd.skel.h, only from SKEL_USERS: the
#     owners of the programs and maps;
#   - a layer's internal header (*_int.h) only from the layer itself;
#   - "assets/LAYER/..." (web assets the Makefile makes C strings of) only
#     from LAYER;
# no PROFD_* variable is read outside src/cmd/env.c; and
# docs/architecture.md's "Who owns what" names every src/LAYER/*.c under its
# layer's line, and no file that does not exist.
set -u

# The owners of the programs and maps: the object's, and by name the CPU
# sampler's and heap tracking's.
SKEL_USERS="src/tracer/bpfobj.c src/cpu/cpu_bpf.c src/heap/heap_bpf.c"
SKEL_USERS=$(echo $SKEL_USERS)

self_test() {
	local root tmp out rc=0 want
	root=$(cd "$(dirname "$0")/.." && pwd)
	tmp=$(mktemp -d /tmp/check-layers.XXXXXX)
	trap 'rm -rf "$tmp"' RETURN
	mkdir -p "$tmp/tests"
	cp -r "$root/src" "$tmp/src"
	cp -r "$root/tests/unit" "$tmp/tests/unit"
	mkdir -p "$tmp/docs"
	cp "$root/docs/architecture.md" "$tmp/docs/"
	if ! "$0" "$tmp" >"$tmp/out" 2>&1; then
		echo "check-layers self-test: the tree itself does not pass:" >&2
		cat "$tmp/out" >&2
		return 1
	fi
	# One of each kind of violation, each on a line of its own file.
	printf '#include "cpu/sampler.h"\n' >"$tmp/src/profile/bad_up.c"	# up
	printf '#include "heap/heap.h"\n' >"$tmp/src/cpu/bad_sideways.c"	# sideways
	printf '/* x */\n#include "proc/procs.h"\n' >"$tmp/src/lib/bad_lib.h"	# lib knows nothing
	printf '#include "bpf/targets.bpf.h"\n' >"$tmp/src/tracer/bad_bpf.c"	# not the ABI
	printf '#include "bpf/profd.skel.h"\n' >"$tmp/src/server/bad_skel.c"	# the skeleton
	printf '#include "pprof/pprof_int.h"\n' >"$tmp/src/render/bad_int.c"	# internals
	printf '#include "server/api.h"\n' >"$tmp/tests/unit/heap/bad_test.c"	# a test looks up
	printf '#include "nowhere/x.h"\n' >"$tmp/src/proc/bad_unknown.c"	# no such layer
	printf 'int x;\nchar *k(void) { return getenv("PROFD_X"); }\n' >"$tmp/src/heap/bad_env.c"
	# The docs' tree drifts: it names a file that is gone.
	sed -i 's|^  procs.c  |  ghost.c procs.c  |' "$tmp/docs/architecture.md"
	"$0" "$tmp" >"$tmp/out" 2>&1
	[ $? -ne 0 ] || { echo "check-layers self-test: planted includes passed" >&2; rc=1; }
	for want in src/profile/bad_up.c:1: src/cpu/bad_sideways.c:1: src/lib/bad_lib.h:2: \
		    src/tracer/bad_bpf.c:1: src/server/bad_skel.c:1: src/render/bad_int.c:1: \
		    tests/unit/heap/bad_test.c:1: src/proc/bad_unknown.c:1: \
		    src/heap/bad_env.c:2: "docs/architecture.md:[0-9]*: Who owns what: src/proc/ghost.c"; do
		grep -q "^$want" "$tmp/out" || { echo "check-layers self-test: missed $want" >&2; rc=1; }
	done
	[ $rc -eq 0 ] && echo "check-layers self-test: 8 planted includes, a stray getenv and a drifted docs tree caught"
	return $rc
}

if [ "${1:-}" = --self-test ]; then
	self_test
	exit
fi

ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$ROOT" || exit 2
[ -f src/LAYERS ] || { echo "check-layers: no src/LAYERS in $ROOT" >&2; exit 2; }

declare -A allowed
layers=()
while IFS=: read -r layer below; do
	layers+=("$layer")
	allowed[$layer]=" $layer $below "
done < <(grep -E '^[a-z]+:' src/LAYERS)

bad=0
violation() {	# FILE LINE MESSAGE
	echo "$1:$2: $3"
	bad=$((bad + 1))
}

check_file() {	# FILE LAYER
	local f=$1 layer=$2 n inc target
	while IFS=: read -r n inc; do
		inc=${inc#*\"}
		inc=${inc%%\"*}
		target=${inc%%/*}
		if [ "$target" = "$inc" ]; then
			# A layer's tests may share a helper beside them (tests/unit/
			# LAYER/x.h): it is the layer's own, like the tests.
			[[ "$f" == tests/unit/* ]] && [ -f "$(dirname "$f")/$inc" ] && continue
			violation "$f" "$n" "\"$inc\" names no layer"
			continue
		fi
		if [ "$target" = assets ]; then
			inc=${inc#assets/}
			[ "${inc%%/*}" = "$layer" ] ||
				violation "$f" "$n" "\"assets/$inc\" is another layer's asset"
			continue
		fi
		if [ "$inc" = bpf/profd.skel.h ]; then
			[[ " $SKEL_USERS " == *" $f "* ]] ||
				violation "$f" "$n" "only the programs' owners ($SKEL_USERS) include the skeleton"
			continue
		fi
		if [ -z "${allowed[$target]+x}" ]; then
			violation "$f" "$n" "\"$inc\": no layer $target in src/LAYERS"
			continue
		fi
		if [[ "${allowed[$layer]}" != *" $target "* ]]; then
			violation "$f" "$n" "$layer includes \"$inc\": $layer may include only $(echo ${allowed[$layer]}) (src/LAYERS)"
			continue
		fi
		if [ "$target" = bpf ] && [ "$layer" != bpf ] && [[ "$inc" != bpf/abi/* ]]; then
			violation "$f" "$n" "user space includes only the kernel side's ABI, bpf/abi/*.h, not \"$inc\""
			continue
		fi
		if [[ "$inc" == *_int.h ]] && [ "$target" != "$layer" ]; then
			violation "$f" "$n" "\"$inc\" is $target's internal header"
			continue
		fi
	done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
}

for layer in "${layers[@]}"; do
	for dir in "src/$layer" "tests/unit/$layer"; do
		[ -d "$dir" ] || continue
		while IFS= read -r f; do
			check_file "$f" "$layer"
		done < <(find "$dir" -type f \( -name '*.c' -o -name '*.h' \) | sort)
	done
done
# A folder under src/ or tests/unit/ that src/LAYERS does not know.
for dir in src/*/ tests/unit/*/; do
	[ -d "$dir" ] || continue
	d=${dir%/}
	d=${d##*/}
	[ -n "${allowed[$d]+x}" ] || violation "${dir%/}" 0 "folder of no layer in src/LAYERS"
done
# Every PROFD_* knob is read in cmd/env.c, nowhere else.
while IFS=: read -r f n _; do
	violation "$f" "$n" "a PROFD_* variable read outside src/cmd/env.c (cmd/env.h)"
done < <(grep -rn 'getenv("PROFD_' src --include='*.c' --include='*.h' | grep -v '^src/cmd/env.c:')

# docs/architecture.md's "Who owns what" is the tree: every source file of
# src/ named under its folder's line, and no name there that is not a file.
doc=docs/architecture.md
if [ -f "$doc" ]; then
	tree=$(awk '/^## Who owns what/ { s = 1 } s && /^```/ { n++; if (n == 2) exit; next } s && n == 1' "$doc")
	tree_line=$(grep -n '^## Who owns what' "$doc" | cut -d: -f1)
	for layer in "${layers[@]}"; do
		block=$(printf '%s\n' "$tree" | awk -v d="src/$layer/" '
			$1 == d { s = 1; next } s && /^[^ ]/ { exit } s')
		[ -n "$block" ] || { violation "$doc" "${tree_line:-0}" "Who owns what: no src/$layer/"; continue; }
		for f in src/"$layer"/*.c src/"$layer"/*.bpf.h src/"$layer"/*/; do
			[ -e "$f" ] || continue
			name=${f#src/"$layer"/}
			printf '%s\n' "$block" | grep -qE "(^|[ ])${name//./\\.}([ ,;]|$)" ||
				violation "$doc" "${tree_line:-0}" "Who owns what: $f is not in src/$layer/"
		done
		for name in $({ printf '%s\n' "$block" | grep -oE '[a-z0-9_]+(\.bpf)?\.(c|h|js|html)\b'
				printf '%s\n' "$block" | awk '$1 ~ /\/$/ { print $1 }'; } | sort -u); do
			[ -e "src/$layer/$name" ] || compgen -G "src/$layer/*/$name" >/dev/null ||
				violation "$doc" "${tree_line:-0}" "Who owns what: src/$layer/$name does not exist"
		done
	done
fi
[ $bad -eq 0 ] || { echo "check-layers: $bad violation(s) of src/LAYERS or its docs" >&2; exit 1; }
exit 0
