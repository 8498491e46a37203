# tests/lib/test-user.sh — the unprivileged test user of tests/run-suite.sh and tests/run-some.sh
# (both run as root and source this):
#   test_user_setup USER: create USER (with a home) if missing, and give root and USER
#     subordinate id ranges (for --user) where they have none: useradd usually adds the user's,
#     root's is ours to add.  Sets test_user_home.
#   as_test_user USER CMD...: run CMD as USER with a clean environment (HOME, USER, PATH and
#     CSRUN_MUST_WORK only).

test_user_setup () {
  local user=$1 who f start
  id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
  for who in root "$user"; do
    for f in /etc/subuid /etc/subgid; do
      grep -q "^$who:" "$f" 2>/dev/null && continue
      case $who in root) start=300000 ;; *) start=400000 ;; esac
      echo "$who:$start:65536" >> "$f"
    done
  done
  test_user_home=$(getent passwd "$user" | cut -d: -f6)
}

as_test_user () {
  local user=$1
  shift
  runuser -u "$user" -- env -i HOME="$(getent passwd "$user" | cut -d: -f6)" USER="$user" \
    PATH=/usr/local/bin:/usr/bin:/bin CSRUN_MUST_WORK="${CSRUN_MUST_WORK:-0}" "$@"
}
