# Sourced, not run: picks a JDK >= 21 for Mailroom's scripts, whatever `java` on the PATH is.
# Order: $JAVA_HOME if it is new enough, then the newest JDK under /usr/lib/jvm (Debian, Temurin
# packages) and /opt/java, then the `java` on the PATH. Exports JAVA_HOME and puts its bin/ first
# on the PATH, so ./mvnw and `java -jar` both run on it. On failure it says what it looked at.
mailroom_jdk_major() {
  "$1/bin/java" -XshowSettings:properties -version 2>&1 \
    | awk -F'= ' '/java.specification.version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1])}'
}

mailroom_use_jdk() {
  local min=21 best="" best_major=0 home major candidates=()
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  for home in /usr/lib/jvm/* /opt/java/*; do candidates+=("$home"); done
  if command -v javac >/dev/null 2>&1; then
    candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
  fi
  for home in "${candidates[@]}"; do
    [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || continue
    major=$(mailroom_jdk_major "$home" 2>/dev/null)
    case "$major" in ''|*[!0-9]*) continue ;; esac
    # $JAVA_HOME wins when it is new enough: the user chose it.
    if [ "$home" = "${JAVA_HOME:-}" ] && [ "$major" -ge "$min" ]; then best=$home; best_major=$major; break; fi
    if [ "$major" -ge "$min" ] && [ "$major" -gt "$best_major" ]; then best=$home; best_major=$major; fi
  done
  if [ -z "$best" ]; then
    echo "Mailroom needs a JDK $min or newer (javac included). Looked at \$JAVA_HOME (${JAVA_HOME:-unset}), /usr/lib/jvm/*, /opt/java/* and the PATH." >&2
    echo "Install one (e.g. 'apt-get install openjdk-21-jdk-headless') or set JAVA_HOME to it." >&2
    return 1
  fi
  export JAVA_HOME="${best%/}"
  export PATH="$JAVA_HOME/bin:$PATH"
  MAILROOM_JDK_MAJOR=$best_major
}
