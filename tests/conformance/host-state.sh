#!/bin/bash
# Snapshot the host state an OCI runtime (or a conformance test) could change:
#
#   host-state.sh OUT          write the snapshot to OUT
#   host-state.sh --diff A B   compare two snapshots; exit 1 (and print the diff) if they differ
#
# Covers every readable sysctl under /proc/sys except those that change by
# themselves, the host mount namespace's mount table (/proc/1/mountinfo, with mount
# ids dropped), the cgroup directory trees under /sys/fs/cgroup (except the
# subtrees others create and remove while we run: csrun's own test cgroups,
# process_api, systemd's transient units), and the /dev listing.  Read-only.
set -uo pipefail

if [ "${1:-}" = --diff ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --diff A B" >&2; exit 2; }
  diff -u "$2" "$3"
  [ $? = 0 ] || exit 1
  exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 OUT | --diff A B" >&2; exit 2; }
out=$1

# Sysctls that move on their own (counters, random, time-based state).
volatile='^/proc/sys/(kernel/random/|kernel/ns_last_pid|kernel/pty/nr|kernel/tainted|fs/(dentry-state|inode-nr|inode-state|file-nr|aio-nr|quota/|binfmt_misc/)|net/netfilter/nf_conntrack_count|kernel/sched_domain/|vm/stat_refresh|vm/drop_caches|vm/compact_memory|fs/fanotify/|fs/inotify/|kernel/keys/|kernel/perf_event_max|kernel/unprivileged_userns_apparmor|kernel/watchdog_thresh|net/ipv4/tcp_(mem|fastopen_key)|net/ipv4/route/gc_|net/ipv6/route/gc_|kernel/hung_task|vm/nr_|user/)'
# cgroups that other processes on the machine create and remove (process_api
# holds one per session command; csrun's test suite makes csrun-* cgroups).
# csrun keeps two parents once made: csrun/ (its snippet engine, whose test suite runs
# first) and csrun-containers/ itself (a container's cgroup below it must go away).
cg_volatile='^/sys/fs/cgroup/[^/]+/(process_api(/|$)|csrun(/|$)|csrun-containers$|csrun-[^/]*test[^/]*(/|$)|system\.slice/[^/]*\.scope(/|$)|user\.slice(/|$)|init\.scope(/|$))'

{
  echo "## sysctl"
  find /proc/sys -type f -readable 2>/dev/null | LC_ALL=C sort | grep -v -E "$volatile" | while read -r f; do
    v=$(tr '\n\t' '  ' < "$f" 2>/dev/null) || continue
    printf '%s = %s\n' "$f" "$v"
  done
  echo "## mounts (host mount namespace)"
  # Fields 1-2 (mount id, parent id) change when the same mount is re-made; keep the rest.
  cut -d' ' -f3- /proc/1/mountinfo 2>/dev/null | LC_ALL=C sort
  echo "## cgroups"
  find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | grep -v -E "$cg_volatile" | LC_ALL=C sort
  echo "## /dev"
  find /dev -maxdepth 3 -printf '%p %y %m %U:%G %r\n' 2>/dev/null | grep -v -E '^/dev/(pts/[0-9]+|shm/|mqueue/)' | LC_ALL=C sort
} > "$out"
