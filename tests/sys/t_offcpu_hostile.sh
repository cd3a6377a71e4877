#!/bin/bash
# Hostile input to the wait_event label (issue 24): a root-installed binary
# named postgres (so its title area and wait event are read, as a real
# postgres's) exports my_wait_event_info, and a thread keeps pointing it at
# unmapped memory, at garbage and at NULL while the main thread waits.
# The off-CPU profile must come, with wait_event absent or a class and id
# for that process (never a crash, never another process's memory), and
# count the unreadable ones in its comments; the daemon keeps serving.
. "$(dirname "$0")/../lib/common.sh"
need_root
command -v go >/dev/null || { echo "skip: no go (make test-deps)"; exit 77; }

mkdir -p "$WORK/bin"
cat >"$WORK/fake.c" <<'EOF'
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint32_t ev = 0x2A00002A;	/* no class postgres has */
uint32_t *my_wait_event_info = &ev;

static void *flip(void *arg)
{
	for (unsigned i = 0;; i++) {
		switch (i % 4) {
		case 0: my_wait_event_info = (uint32_t *)0x10; break;	/* unmapped */
		case 1: my_wait_event_info = (uint32_t *)(uintptr_t)0xffffffffffff0000ull; break;
		case 2: my_wait_event_info = NULL; break;
		case 3: my_wait_event_info = &ev; break;
		}
		struct timespec ts = {0, 3000000};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

__attribute__((noinline)) void fake_wait(void)
{
	struct timespec ts = {0, 20000000};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	pthread_t t;
	int n = atoi(argv[1]);

	pthread_create(&t, NULL, flip, NULL);
	for (int i = 0; i < n; i++)
		fake_wait();
	return 0;
}
EOF
# -rdynamic: the symbol in .dynsym, as postgres exports its globals.
cc -O1 -g -fno-omit-frame-pointer -rdynamic -pthread -o "$WORK/bin/postgres" "$WORK/fake.c"
chown root:root "$WORK/bin/postgres"
chmod 755 "$WORK/bin/postgres"

start_record --off-cpu --seconds 600 --exe "$WORK/bin/postgres" --labels default,pid \
	-o "$WORK/h.pb.gz"
"$WORK/bin/postgres" 150
kill -INT $RECORD_PID
wait $RECORD_PID || fail "profd record --off-cpu failed on a hostile my_wait_event_info"
python3 - "$WORK/h.pb.gz" <<'PY' || fail "the hostile process's profile"
import sys, pprof_raw
p = pprof_raw.load(sys.argv[1])
mine = [s for s in p.samples if s["labels"].get("process_name") == "postgres"]
waits = sum(s["values"][1] for s in mine if any("fake_wait" in f for f in p.frames(s) if f)) / 1e9
print(f"fake_wait: {waits:.3f} s off CPU")
assert waits >= 2.0, f"only {waits:.3f} s of its ~3 s of waits"
events = {s["labels"].get("wait_event") for s in mine}
print("wait_event values:", events)
assert events <= {None, "0x2A00002A"}, events
assert any("have no wait_event" in c for c in p.comments), p.comments
PY
pass "a hostile my_wait_event_info: no wait_event or its raw id, counted, the profile whole"
