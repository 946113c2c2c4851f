#!/usr/bin/env bash
# Runs the chaos harness (io.mailroom.chaos.ChaosRun) from this checkout: builds what it needs
# (nothing is installed into ~/.m2), then runs three dispatcher processes, a fault-injecting
# provider stub and an order writer against a fresh database on $MAILROOM_TEST_DB_URL.
#
#   scripts/chaos.sh                         # short HTTP run (about 3 minutes, what CI runs as a test)
#   scripts/chaos.sh --transport smtp        # short SMTP run, review mode
#   scripts/chaos.sh --long                  # 25 min, 24,000 orders, one PostgreSQL restart: by hand only
#   scripts/chaos.sh --long --load 6m --rate 16 --outage-at 2m --no-restart-postgres
#
# --long restarts the PostgreSQL server named by $MAILROOM_TEST_DB_URL (pg_ctlcluster ... restart):
# never run it while others use that server. The summary table goes to stdout and to
# tools/chaos/target/chaos-summary.md (chaos-summary-smtp.md for SMTP); logs and records to
# tools/chaos/target/chaos-http/ (or chaos-smtp/). Exit status 0 = passed, 1 = a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/chaos-lib.sh
transport=http
for a in "$@"; do case "$a" in smtp|--transport=smtp) transport=smtp ;; esac; done
chaos_java io.mailroom.chaos.ChaosRun \
  --work-dir "tools/chaos/target/chaos-$transport" "$@"
