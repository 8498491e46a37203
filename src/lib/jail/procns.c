/* csrun — other processes' namespaces, through /proc (see procns.h). */
#include "config.h"
#include "procns.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "../util/cleanup.h"

/* The namespace's identity: the device and inode of /proc/PID/ns/KIND. */
static int
ns_stat (const char *pid, const char *kind, struct stat *st)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "/proc/%s/ns/%s", pid, kind);
  return stat (path, st);
}

static int
same_ns (const struct stat *a, const struct stat *b)
{
  return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

int
csr_procns_is_ours (pid_t pid, const char *kind)
{
  char p[24];
  snprintf (p, sizeof p, "%d", (int)pid);
  struct stat theirs, ours;
  if (ns_stat (p, kind, &theirs) < 0)
    return -1;
  return ns_stat ("self", kind, &ours) == 0 && same_ns (&theirs, &ours);
}

size_t
csr_procns_pid_members (pid_t pid, pid_t *out, size_t cap)
{
  char p[24];
  snprintf (p, sizeof p, "%d", (int)pid);
  struct stat ns;
  if (ns_stat (p, "pid", &ns) < 0)
    return 0;
  struct stat self;
  if (ns_stat ("self", "pid", &self) < 0 || same_ns (&self, &ns))
    {
      if (cap == 0)
        return 0;
      out[0] = pid;
      return 1;
    }
  cleanup_dir DIR *d = opendir ("/proc");
  if (d == NULL)
    return 0;
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL && n < cap)
    {
      char *end;
      long other_pid = strtol (de->d_name, &end, 10);
      if (*end || other_pid <= 0)
        continue;
      struct stat other;
      if (ns_stat (de->d_name, "pid", &other) == 0 && same_ns (&other, &ns))
        out[n++] = (pid_t)other_pid;
    }
  return n;
}
