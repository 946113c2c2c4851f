#!/usr/bin/env bash
# Runs the README's run command as a newcomer would and checks that the system works: the demo's
# five sample emails arrive (three order confirmations, one in Vietnamese, a shipping notice and a
# cancellation), a curl POST places another order whose email arrives too, the
# dispatcher reports ready, no email arrives twice, and SIGTERM stops everything (a script's
# background job ignores SIGINT, so the stop is the signal a service manager sends). Used by
# .ci/run; also by hand.
#   scripts/demo-smoke.sh [TIMEOUT_SECONDS]   (default 300; includes the first build)
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-300}
cmd=$(scripts/readme-command.sh run)
log=$(mktemp -t mailroom-demo.XXXXXX.log)
echo "demo-smoke: running the README's run command: $cmd (java on the PATH: $(java -version 2>&1 | head -n 1 || echo none))"

setsid bash -c "$cmd" >"$log" 2>&1 &
pid=$!
stop() {
  kill -TERM -- -"$pid" 2>/dev/null || true
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  echo "demo-smoke: the demo did not stop within 30 s of SIGTERM; killing it" >&2
  kill -KILL -- -"$pid" 2>/dev/null || true
  return 1
}
fail() {
  echo "demo-smoke: FAILED: $*" >&2
  echo "---- last 60 lines of the demo's output ($log) ----" >&2
  tail -n 60 "$log" >&2
  stop || true
  exit 1
}
received() { grep -c 'SMTP sink received: ' "$log" || true; }
wait_for() { # wait_for SECONDS DESCRIPTION TEST...
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@"; do
    kill -0 "$pid" 2>/dev/null || fail "the demo exited before $what"
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for $what"
    sleep 1
  done
}
at_least() { [ "$(received)" -ge "$1" ]; }

wait_for "$limit" "the five sample emails" at_least 5
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST localhost:8081/orders -H 'Content-Type: application/json' -d '{
  "customerEmail": "ann@example.com", "customerName": "Ann Lee", "currency": "EUR",
  "lines": [{"sku": "MUG-1", "name": "Mug", "quantity": 2, "unitPrice": 12.50}]}')
[ "$code" = 201 ] || fail "POST /orders answered $code, not 201"
wait_for 60 "the curl order's email" at_least 6
ready=$(curl -s -o /dev/null -w '%{http_code}' localhost:8082/health/ready)
[ "$ready" = 200 ] || fail "/health/ready answered $ready, not 200"
ids=$(grep -o 'Message-ID <[^>]*>' "$log" | sort)
[ "$(uniq <<<"$ids" | wc -l)" = "$(wc -l <<<"$ids")" ] || fail "an email arrived twice: $(uniq -d <<<"$ids")"
stop || fail "SIGTERM did not stop the demo"
echo "demo-smoke: ok: $(received) emails received, POST /orders 201, /health/ready 200, stopped on SIGTERM"
