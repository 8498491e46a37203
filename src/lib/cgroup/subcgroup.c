/* csrun — `csrun exec --cgroup` (see exec-cgroup.h).  The runtime spec has
 * no such option; this is runc's (crun's --cgroup takes the same forms). */
#include "config.h"
#include "subcgroup.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "mountinfo.h"

int
csr_cgroup_sub_path (const char *base, const char *sub, char **out, csr_error **err)
{
  size_t base_len = strlen (base);
  cleanup_free char *buf = malloc (base_len + strlen (sub) + 2);
  if (buf == NULL)
    return csr_error_errno (err, "--cgroup");
  while (base_len > 1 && base[base_len - 1] == '/')
    base_len--;
  memcpy (buf, base, base_len);
  size_t len = base_len;
  const char *p = sub, *c;
  size_t n;
  while ((c = csr_path_next (&p, &n)) != NULL)
    {
      if (csr_path_is_dotdot (c, n))
        {
          if (len == base_len)
            return csr_error_set (err, 0, "%s is not a sub cgroup path", sub);
          while (len > base_len && buf[len - 1] != '/')
            len--;
          len--;
        }
      else if (!csr_path_is_dot (c, n))
        {
          buf[len++] = '/';
          memcpy (buf + len, c, n);
          len += n;
        }
    }
  buf[len] = '\0';
  *out = steal_pointer (&buf);
  return 0;
}

/* The controllers of the v1 hierarchy that holds DIR ("cpu,cpuacct"): the
 * super options of the longest cgroup mount point above it, from the
 * mountinfo TEXT. */
static void
v1_controllers (const struct csr_mountinfo *mi, const char *dir, char *out, size_t size)
{
  size_t best = 0;
  *out = '\0';
  for (size_t k = 0; k < mi->n; k++)
    {
      const struct csr_mountinfo_entry *e = &mi->e[k];
      if (strcmp (e->fstype, "cgroup") != 0)
        continue;
      size_t n = strlen (e->mount_point);
      if (n <= best || !csr_mountinfo_under (dir, e->mount_point))
        continue;
      best = n;
      size_t used = 0;
      out[0] = '\0';
      for (const char *o = e->super_opts; *o;)
        {
          size_t l = strcspn (o, ",");
          if (!(l == 2 && (strncmp (o, "rw", 2) == 0 || strncmp (o, "ro", 2) == 0))
              && memchr (o, '=', l) == NULL && used + l + 2 < size)
            used
                += (size_t)snprintf (out + used, size - used, "%s%.*s", used ? "," : "", (int)l, o);
          o += l + (o[l] == ',');
        }
    }
}

static bool
list_has (const char *list, const char *word, size_t n)
{
  for (const char *p = list; *p;)
    {
      const char *end = strchrnul (p, ',');
      if ((size_t)(end - p) == n && strncmp (p, word, n) == 0)
        return true;
      p = *end ? end + 1 : end;
    }
  return false;
}

/* The PATH of the argument naming one of CTRLS' controllers, or NULL. */
static void
path_for (const char *ctrls, const char *const *args, size_t n_args, const char **path)
{
  *path = NULL;
  for (size_t i = 0; i < n_args; i++)
    {
      const char *colon = strchr (args[i], ':');
      for (const char *c = args[i]; c < colon;)
        {
          const char *end = memchr (c, ',', (size_t)(colon - c));
          if (end == NULL)
            end = colon;
          if (end > c && list_has (ctrls, c, (size_t)(end - c)))
            *path = colon + 1;
          c = end + 1;
        }
    }
}

void
csr_cgroup_exec_dirs_free (char **dirs, size_t n)
{
  for (size_t i = 0; dirs && i < n; i++)
    free (dirs[i]);
  free (dirs);
}

int
csr_cgroup_exec_dirs (const char *v2, char *const *v1, size_t n_v1, const char *const *args,
                      size_t n_args, const char *mountinfo, char ***out, size_t *n_out,
                      csr_error **err)
{
  const char *all = NULL;
  for (size_t i = 0; i < n_args; i++)
    {
      const char *colon = strchr (args[i], ':');
      if (colon && strchr (colon + 1, ':'))
        return csr_error_set (err, 0, "invalid --cgroup argument: %s", args[i]);
      if (colon == NULL && n_args != 1)
        return csr_error_set (
            err, 0, "invalid --cgroup argument: %s (missing <controller>: prefix)", args[i]);
      if (colon == NULL)
        all = args[i];
    }
  cleanup_free char *text = NULL;
  if (n_args > 0 && all == NULL && mountinfo == NULL)
    {
      size_t len;
      if (csr_read_file ("/proc/self/mountinfo", 4 << 20, &text, &len, err) < 0)
        return -1;
      mountinfo = text;
    }
  size_t n_dirs = n_v1 + (v2 ? 1 : 0);
  cleanup_free char (*ctrls)[256] = calloc (n_v1 ? n_v1 : 1, sizeof *ctrls);
  char **dirs = calloc (n_dirs ? n_dirs : 1, sizeof *dirs);
  struct csr_mountinfo mi = { 0 };
  if (ctrls == NULL || dirs == NULL
      || (n_args > 0 && all == NULL && csr_mountinfo_parse (mountinfo, &mi, NULL) < 0))
    {
      free (dirs);
      return csr_error_errno (err, "--cgroup");
    }
  for (size_t d = 0; d < n_v1 && n_args > 0 && all == NULL; d++)
    v1_controllers (&mi, v1[d], ctrls[d], sizeof ctrls[d]);
  csr_mountinfo_release (&mi);
  /* Every controller named must be one of the container's hierarchies'. */
  for (size_t i = 0; i < n_args && all == NULL; i++)
    {
      const char *colon = strchr (args[i], ':');
      for (const char *c = args[i]; c < colon;)
        {
          const char *end = memchr (c, ',', (size_t)(colon - c));
          if (end == NULL)
            end = colon;
          bool found = false;
          for (size_t d = 0; d < n_v1 && !found; d++)
            found = end > c && list_has (ctrls[d], c, (size_t)(end - c));
          if (!found)
            {
              free (dirs);
              return csr_error_set (err, 0, "unknown controller %.*s in --cgroup %s",
                                    (int)(end - c), c, args[i]);
            }
          c = end + 1;
        }
    }
  for (size_t d = 0; d < n_dirs; d++)
    {
      bool is_v2 = d == n_v1;
      const char *dir = is_v2 ? v2 : v1[d];
      const char *sub = all;
      if (sub == NULL && !is_v2)
        path_for (ctrls[d], args, n_args, &sub);
      int r = sub ? csr_cgroup_sub_path (dir, sub, &dirs[d], err) : 0;
      if (r == 0 && sub == NULL && (dirs[d] = strdup (dir)) == NULL)
        r = csr_error_errno (err, "--cgroup");
      if (r < 0)
        {
          csr_cgroup_exec_dirs_free (dirs, n_dirs);
          return -1;
        }
    }
  *out = dirs;
  *n_out = n_dirs;
  return 0;
}

int
csr_cgroup_exec_open (const char *v2, char *const *v1, size_t n_v1, const char *const *args,
                      size_t n_args, int *fds, size_t max, size_t *n, csr_error **err)
{
  char **dirs = NULL;
  size_t n_dirs = 0;
  *n = 0;
  if (csr_cgroup_exec_dirs (v2, v1, n_v1, args, n_args, NULL, &dirs, &n_dirs, err) < 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < n_dirs && *n < max && rc == 0; i++)
    {
      char path[PATH_MAX];
      snprintf (path, sizeof path, "%s/cgroup.procs", dirs[i]);
      int fd = open (path, O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        {
          /* runc's words, which scripts match ("... no such file or directory") */
          char msg[128];
          snprintf (msg, sizeof msg, "%s", strerror (errno));
          msg[0] = (char)tolower ((unsigned char)msg[0]);
          rc = csr_error_set (err, 0, "adding pid to cgroups: open %s: %s", path, msg);
        }
      else
        fds[(*n)++] = fd;
    }
  csr_cgroup_exec_dirs_free (dirs, n_dirs);
  if (rc < 0)
    while (*n > 0)
      close (fds[--*n]);
  return rc;
}

int
csr_cgroup_exec_join (const int *fds, size_t n, pid_t pid, csr_error **err)
{
  char text[24];
  int len = snprintf (text, sizeof text, "%d", (int)pid);
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    if (write (fds[i], text, (size_t)len) != len && rc == 0)
      rc = csr_error_errno (err, "move pid %d into the container's cgroup", (int)pid);
  return rc;
}
