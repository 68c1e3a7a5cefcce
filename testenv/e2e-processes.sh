#!/usr/bin/env bash
# The end-to-end suite in external mode against separate processes, the
# compose topology without Docker: the fake upstream (testenv/cmd/fakeupstream),
# toolproc (testenv/testdata/e2e-external.yaml) and the Envoy stand-in
# (testenv/cmd/standin, -upstream the fake) each run as their own process on
# loopback ports, then `make e2e-external` runs the suite against the stand-in.
# Usage: testenv/e2e-processes.sh BIN_DIR (make e2e-processes builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin}
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Six free loopback ports from a random base (several checkouts may run this at once).
in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ports=()
p=$((20000 + RANDOM % 30000))
while [ ${#ports[@]} -lt 6 ]; do
  in_use "$p" || ports+=("$p")
  p=$((p + 1))
done
up=${ports[0]} upadmin=${ports[1]} grpc=${ports[2]} admin=${ports[3]} proxy=${ports[4]} replay=${ports[5]}

{ cat testenv/testdata/e2e-external.yaml; echo "server: {replay_url: http://127.0.0.1:$replay}"; } >"$work/toolproc.yaml"

"$bin/fakeupstream" -listen "127.0.0.1:$up" -admin-listen "127.0.0.1:$upadmin" 2>"$work/fakeupstream.log" & pids+=($!)
"$bin/toolproc" serve --config "$work/toolproc.yaml" --grpc-addr "127.0.0.1:$grpc" --admin-addr "127.0.0.1:$admin" \
  --log-level warn 2>"$work/toolproc.log" & pids+=($!)
"$bin/standin" -listen "127.0.0.1:$proxy" -replay-listen "127.0.0.1:$replay" -extproc "127.0.0.1:$grpc" \
  -upstream "http://127.0.0.1:$up" -response-body-mode FULL_DUPLEX_STREAMED 2>"$work/standin.log" & pids+=($!)

for port in "$up" "$upadmin" "$grpc" "$admin" "$proxy" "$replay"; do
  for _ in $(seq 100); do in_use "$port" && break; sleep 0.1; done
  in_use "$port" || { echo "port $port never opened"; tail -n 20 "$work"/*.log; exit 1; }
done
echo "e2e-processes: fake upstream :$up (admin :$upadmin), toolproc :$grpc (admin :$admin), stand-in :$proxy (replay :$replay)"

status=0
make --no-print-directory e2e-external PROXY="http://127.0.0.1:$proxy" UPSTREAM_ADMIN="http://127.0.0.1:$upadmin" \
  TOOLPROC_ADMIN="http://127.0.0.1:$admin" || status=$?
if [ "$status" -ne 0 ]; then tail -n 30 "$work"/*.log; fi
exit "$status"
