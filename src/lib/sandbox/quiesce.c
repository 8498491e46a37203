/* csrun — a running sandbox kept still (quiesce.h).
 *
 * Without a cgroup (rootless without a delegated one) the processes are
 * found in /proc: descendants of the keeper (every process of the sandbox
 * is: the jail's init is its child, each exec's helper too, and orphans are
 * reparented to the init) whose NSpid has more levels than the keeper's
 * (the helpers, in the keeper's pid namespace, are not).  /proc/PID/status
 * is readable without ptrace rights, which a rootless keeper lacks for the
 * jail's init.  Stopped ones can't fork: the passes end when one finds
 * every process stopped. */
#include "config.h"
#include "quiesce.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"

#define STOP_TIMEOUT_MS 5000

struct proc
{
  pid_t pid, ppid;
  int levels; /* NSpid's */
  char state;
  bool mine; /* a descendant of the caller */
};

/* PID's status: parent, state, NSpid levels; -1 when gone. */
static int
read_status (pid_t pid, struct proc *p)
{
  char path[64], buf[4096];
  snprintf (path, sizeof path, "/proc/%d/status", (int)pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  *p = (struct proc){ .pid = pid, .levels = 1 };
  for (char *l = buf; l && *l; l = strchr (l, '\n') ? strchr (l, '\n') + 1 : NULL)
    if (strncmp (l, "State:", 6) == 0)
      p->state = l[6 + strspn (l + 6, " \t")];
    else if (strncmp (l, "PPid:", 5) == 0)
      p->ppid = (pid_t)atoi (l + 5);
    else if (strncmp (l, "NSpid:", 6) == 0)
      {
        p->levels = 0;
        for (char *c = l + 6; *c && *c != '\n';)
          {
            c += strspn (c, " \t");
            if (*c == '\n' || !*c)
              break;
            p->levels++;
            c += strcspn (c, " \t\n");
          }
      }
  return 0;
}

/* Every process of /proc, with the caller's descendants marked. */
static int
scan (struct proc **out, size_t *n, csr_error **err)
{
  *out = NULL;
  *n = 0;
  DIR *d = opendir ("/proc");
  if (d == NULL)
    return csr_error_errno (err, "read /proc");
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      char *end;
      long pid = strtol (de->d_name, &end, 10);
      if (*end || pid <= 0)
        continue;
      if (*n == cap)
        {
          cap = cap ? cap * 2 : 256;
          struct proc *nv = realloc (*out, cap * sizeof *nv);
          if (nv == NULL)
            {
              closedir (d);
              return csr_error_set (err, ENOMEM, "scan /proc");
            }
          *out = nv;
        }
      if (read_status ((pid_t)pid, &(*out)[*n]) == 0)
        (*n)++;
    }
  closedir (d);
  pid_t self = getpid ();
  for (bool changed = true; changed;)
    {
      changed = false;
      for (size_t i = 0; i < *n; i++)
        {
          struct proc *p = &(*out)[i];
          if (p->mine)
            continue;
          bool m = p->ppid == self;
          for (size_t j = 0; !m && j < *n; j++)
            m = (*out)[j].mine && (*out)[j].pid == p->ppid;
          if (m)
            p->mine = changed = true;
        }
    }
  return 0;
}

static bool
listed (const pid_t *v, size_t n, pid_t pid)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] == pid)
      return true;
  return false;
}

/* One pass: SIGSTOP what runs; 1 when every process was stopped. */
static int
stop_pass (struct csr_quiesce *q, pid_t skip, int my_levels, pid_t **already, size_t *n_already,
           bool first, pid_t *stuck, csr_error **err)
{
  struct proc *ps;
  size_t n;
  if (scan (&ps, &n, err) < 0)
    return -1;
  int all = 1;
  for (size_t i = 0; i < n; i++)
    {
      struct proc *p = &ps[i];
      if (!p->mine || p->levels <= my_levels || p->pid == skip || p->state == 'Z'
          || p->state == 'X')
        continue;
      bool is_stopped = p->state == 'T' || p->state == 't';
      if (first && is_stopped)
        {
          pid_t *nv = realloc (*already, (*n_already + 1) * sizeof *nv);
          if (nv == NULL)
            {
              free (ps);
              return csr_error_set (err, ENOMEM, "stop the sandbox");
            }
          *already = nv;
          nv[(*n_already)++] = p->pid;
          continue;
        }
      if (is_stopped)
        continue;
      all = 0;
      *stuck = p->pid;
      if (listed (q->stopped, q->n_stopped, p->pid) || listed (*already, *n_already, p->pid))
        continue;
      pid_t *nv = realloc (q->stopped, (q->n_stopped + 1) * sizeof *nv);
      if (nv == NULL)
        {
          free (ps);
          return csr_error_set (err, ENOMEM, "stop the sandbox");
        }
      q->stopped = nv;
      if (kill (p->pid, SIGSTOP) == 0)
        nv[q->n_stopped++] = p->pid;
    }
  free (ps);
  return all;
}

static int
stop_all (struct csr_quiesce *q, pid_t skip, csr_error **err)
{
  struct proc self;
  if (read_status (getpid (), &self) < 0)
    return csr_error_errno (err, "read /proc/self/status");
  pid_t *already = NULL;
  size_t n_already = 0;
  int64_t deadline = csr_mono_ms () + STOP_TIMEOUT_MS;
  int rc;
  pid_t stuck = 0;
  for (bool first = true;; first = false)
    {
      rc = stop_pass (q, skip, self.levels, &already, &n_already, first, &stuck, err);
      if (rc != 0)
        break;
      if (csr_mono_ms () > deadline)
        {
          rc = csr_error_set (err, ETIMEDOUT,
                              "process %d of the sandbox did not stop within %d s (in an "
                              "uninterruptible sleep?)",
                              (int)stuck, STOP_TIMEOUT_MS / 1000);
          break;
        }
      struct timespec ts = { 0, first ? 1000000 : 5000000 };
      nanosleep (&ts, NULL);
    }
  free (already);
  return rc < 0 ? -1 : 0;
}

int
csr_quiesce (const struct csr_cgroup *cg, pid_t skip, struct csr_quiesce *q, csr_error **err)
{
  *q = (struct csr_quiesce){ .method = "none" };
  if (cg)
    {
      csr_error *e = NULL;
      if (csr_cgroup_freeze (cg, true, &e) == 0)
        {
          q->frozen = cg;
          q->method = "cgroup-freezer";
          return 0;
        }
      if (e->status != ENOTSUP)
        {
          csr_error_set (err, e->status, "freeze the sandbox: %s", e->msg);
          csr_error_free (e);
          return -1;
        }
      csr_error_free (e);
    }
  q->method = "sigstop";
  if (stop_all (q, skip, err) < 0)
    {
      csr_quiesce_release (q, NULL);
      return -1;
    }
  return 0;
}

int
csr_quiesce_release (struct csr_quiesce *q, csr_error **err)
{
  int rc = 0;
  if (q->frozen && csr_cgroup_freeze (q->frozen, false, err) < 0)
    rc = csr_error_wrap (err, "thaw the sandbox");
  for (size_t i = 0; i < q->n_stopped; i++)
    kill (q->stopped[i], SIGCONT);
  free (q->stopped);
  *q = (struct csr_quiesce){ .method = "none" };
  return rc;
}
