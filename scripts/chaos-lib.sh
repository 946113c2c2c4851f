# Sourced, not run, by the chaos scripts: picks a JDK >= 21, builds the chaos harness from this
# checkout (nothing is installed into ~/.m2), and gives chaos_java MAIN_CLASS [ARGS...], which runs
# one of its main classes with the harness's class path and logging. MAILROOM_TEST_DB_URL defaults to
# the local server; a script that brings its own server sets it before sourcing this.
. scripts/jdk.sh
mailroom_use_jdk
export MAILROOM_TEST_DB_URL=${MAILROOM_TEST_DB_URL:-jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}
./mvnw -q -B -pl tools/chaos -am compile dependency:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime >/dev/null
CHAOS_CP="tools/chaos/target/classes:$(cat tools/chaos/target/classpath.txt)"

chaos_java() {
  java --enable-native-access=ALL-UNNAMED -Dlogback.configurationFile=chaos-logback.xml -cp "$CHAOS_CP" "$@"
}
