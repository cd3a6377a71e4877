#!/bin/bash
# Longer checks of the VM harness (~1 min per kernel under TCG): postgres 15
# in the guest (initdb as user postgres under /tmp, start, pgbench -i -s 1,
# pgbench -T 5 -S, prints the TPS) and port forwarding (busybox httpd on the
# guest port, fetched from the host through --port-file's port).
#   tests/vm/smoke.sh [debian-6.1] [compute-6.12]   (default: both)
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(debian-6.1 compute-6.12)
[ "$(id -u)" -eq 0 ] || { echo "skip: tests/vm/smoke.sh needs root"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "skip: no qemu-system-x86_64"; exit 77; }

pg='
set -e
B=/usr/lib/postgresql/15/bin
t0=$(date +%s)
runuser -u postgres -- $B/initdb -D /tmp/pg -A trust >/tmp/initdb.log 2>&1 || { cat /tmp/initdb.log; exit 1; }
t1=$(date +%s)
runuser -u postgres -- $B/pg_ctl -D /tmp/pg -l /tmp/pg.log -w -t 300 \
	-o "-c listen_addresses= -k /run/postgresql" start >/dev/null || { cat /tmp/pg.log; exit 1; }
t2=$(date +%s)
runuser -u postgres -- $B/pgbench -h /run/postgresql -i -s 1 postgres >/tmp/init.log 2>&1 || { cat /tmp/init.log; exit 1; }
t3=$(date +%s)
tps=$(runuser -u postgres -- $B/pgbench -h /run/postgresql -T 5 -S postgres 2>&1 | sed -n "s/^tps = \([0-9.]*\).*/\1/p")
t4=$(date +%s)
echo "pgbench -S: tps=$tps (initdb $((t1-t0))s, start $((t2-t1))s, pgbench -i $((t3-t2))s, pgbench -S $((t4-t3))s)"
[ -n "$tps" ]
'
http='
mkdir /tmp/www
echo "hello from $(uname -r)" >/tmp/www/index.html
busybox httpd -f -p "$PROFD_VM_PORT" -h /tmp/www &
sleep 20
'

fails=0 passes=0
for k in "${kernels[@]}"; do
	s=$(date +%s)
	if out=$("$HERE/run.sh" --kernel "$k" -- bash -c "$pg" 2>&1); then
		echo "ok: $k: postgres: $out ($(($(date +%s) - s))s in all)"
		passes=$((passes + 1))
	else
		echo "FAIL: $k: postgres:"; echo "$out"
		fails=$((fails + 1))
	fi

	pf=$(mktemp -u /tmp/profd-vm-port.XXXXXX)
	s=$(date +%s)
	"$HERE/run.sh" --kernel "$k" --port-file "$pf" -- bash -c "$http" &
	vm=$!
	got="" t=""
	for _ in $(seq 240); do
		if [ -s "$pf" ] && got=$(curl -sf --max-time 5 "http://127.0.0.1:$(cat "$pf")/"); then
			t=$(($(date +%s) - s))
			break
		fi
		kill -0 $vm 2>/dev/null || break
		sleep 0.5
	done
	wait $vm
	rc=$?
	if [[ $got == "hello from "* ]] && [ $rc -eq 0 ]; then
		echo "ok: $k: port forwarding: '$got' from 127.0.0.1:$(cat "$pf") ${t}s after run.sh started"
		passes=$((passes + 1))
	else
		echo "FAIL: $k: port forwarding: got '$got', run.sh exited $rc"
		fails=$((fails + 1))
	fi
	rm -f "$pf"
done
echo "vm smoke: $passes passed, $fails failed"
[ $fails -eq 0 ]
