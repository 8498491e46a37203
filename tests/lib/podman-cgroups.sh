# Rootful podman with the cgroupfs manager makes conmon's cgroup
# (libpod_parent/conmon) in every v1 controller it knows of, and on a hybrid
# host also plain directories (hugetlb, net_cls, ...) on /sys/fs/cgroup's
# tmpfs where no hierarchy is mounted; podman never removes them.  A test
# that runs podman records the cgroup tree first and removes, at the end,
# what appeared under such names since (rmdir only, and conmon's own pid file
# on the tmpfs: a cgroup still in use, or a directory with anything else in
# it, stays).
#
# podman_cgroups_mark: call before the first podman command.
# podman_cgroups_restore: call from the EXIT trap.

podman_cgroups_mark () {
  PODMAN_CGROUPS_BEFORE=$TAP_BASE/cgroups.before
  find /sys/fs/cgroup -maxdepth 3 -type d 2>/dev/null | LC_ALL=C sort > "$PODMAN_CGROUPS_BEFORE"
}

podman_cgroups_restore () {
  [ -n "${PODMAN_CGROUPS_BEFORE:-}" ] && [ -f "$PODMAN_CGROUPS_BEFORE" ] || return 0
  local d
  # Deepest first: conmon, then libpod_parent, then an emptied top directory.
  find /sys/fs/cgroup -maxdepth 3 -type d 2>/dev/null | LC_ALL=C sort \
    | LC_ALL=C comm -13 "$PODMAN_CGROUPS_BEFORE" - | LC_ALL=C sort -r \
    | while read -r d; do
      case $d in
        */libpod_parent/conmon | */libpod_parent)
          # On the tmpfs (no hierarchy there) conmon wrote its pid to a plain
          # file named tasks; in a real cgroup that file can't be removed.
          [ "$(stat -f -c %T "$d" 2>/dev/null)" = tmpfs ] && rm -f "$d/tasks"
          rmdir "$d" 2>/dev/null
          ;;
        /sys/fs/cgroup/*/*) ;;
        /sys/fs/cgroup/*)
          # A plain directory podman made on the tmpfs (not a mounted hierarchy).
          mountpoint -q "$d" || rmdir "$d" 2>/dev/null
          ;;
      esac
    done
  return 0
}
