#!/usr/bin/env bash
# Runs a main class from a module's test sources (probes, small benchmarks) with the module's test
# class path, building what it needs from this checkout (nothing is installed into ~/.m2).
#   scripts/run-test-main.sh MODULE MAIN_CLASS [ARGS...]
# e.g. scripts/run-test-main.sh outbox-core io.mailroom.outbox.runtime.ClaimCostBenchmark 100000 50 300
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/jdk.sh
mailroom_use_jdk
module=${1:?module}; main=${2:?main class}; shift 2
./mvnw -q -B -pl "$module" -am test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test >/dev/null
cp="$module/target/test-classes:$module/target/classes:$(cat "$module/target/test-classpath.txt")"
exec java --enable-native-access=ALL-UNNAMED -cp "$cp" "$main" "$@"
