/* csrun ps: ps(1)'s output filtered to the container's processes. */
#include "config.h"
#include "oci.h"
#include "oci-cmds.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail/procns.h"
#include "cgroup/cgroup.h"
#include "oci/devices.h"
#include "oci/hooks.h"
#include "oci/notify.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/syscalls.h"

/* Run ps(1) with ARGS (NULL-terminated, argv[0] "ps"); its stdout and
 * stderr together in *OUT.  0, or -1 with the reason (and ps's output). */
static int
run_ps (char **args, char **out, csr_error **err)
{
  *out = NULL;
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      return csr_error_errno (err, "fork");
    }
  if (pid == 0)
    {
      if (dup2 (p[1], 1) < 0 || dup2 (p[1], 2) < 0)
        _exit (127);
      execvp ("ps", args);
      dprintf (2, "exec ps: %s", strerror (errno));
      _exit (127);
    }
  close (p[1]);
  size_t len = 0, cap = 0;
  char *buf = NULL;
  for (;;)
    {
      if (len + 4096 + 1 > cap)
        {
          cap = cap ? cap * 2 : 16384;
          char *nb = cap <= (64u << 20) ? realloc (buf, cap) : NULL;
          if (nb == NULL)
            break;
          buf = nb;
        }
      ssize_t r = read (p[0], buf + len, cap - len - 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      len += (size_t)r;
    }
  close (p[0]);
  int status = 0;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        free (buf);
        return csr_error_errno (err, "wait for ps");
      }
  if (buf == NULL)
    return csr_error_set (err, ENOMEM, "ps output");
  buf[len] = '\0';
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    {
      while (len > 0 && buf[len - 1] == '\n')
        buf[--len] = '\0';
      csr_error_set (err, 0, "ps failed (exit %d): %s",
                     WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status), buf);
      free (buf);
      return -1;
    }
  *out = buf;
  return 0;
}

/* Field N (0-based, blank-separated) of LINE as a pid, or -1. */
static long
pid_field (const char *line, int n)
{
  const char *c = line;
  for (int f = 0;; f++)
    {
      while (*c == ' ' || *c == '\t')
        c++;
      if (*c == '\0' || *c == '\n')
        return -1;
      if (f == n)
        {
          char *end;
          long v = strtol (c, &end, 10);
          return end != c && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\0') ? v : -1;
        }
      while (*c && *c != ' ' && *c != '\t' && *c != '\n')
        c++;
    }
}

/* csrun ps [-f table|json] ID [PS-OPTIONS...]: as runc, ps(1)'s table (by
 * default `ps -ef`) filtered to the container's processes, found by the
 * column titled PID; or, with -f json, the host pids as a JSON array.
 * Options after ID all go to ps (a "--" right after ID is dropped). */
int
cmd_oci_ps (struct csr_global *g, int argc, char **argv)
{
  const char *format = "table", *id = NULL;
  int i = 1;
  for (; i < argc && id == NULL; i++)
    {
      const char *w = argv[i];
      if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
        return help_of (argv[0]);
      if ((strcmp (w, "--format") == 0 || strcmp (w, "-f") == 0))
        {
          if (i + 1 >= argc)
            return oci_failf (g, "%s: %s needs a value (table or json)", argv[0], w);
          format = argv[++i];
        }
      else if (strncmp (w, "--format=", 9) == 0)
        format = w + 9;
      else if (strcmp (w, "--") == 0)
        continue;
      else if (w[0] == '-' && w[1] != '\0')
        return oci_failf (g, "%s: unknown option '%s'", argv[0], w);
      else
        id = w;
    }
  if (id == NULL)
    return oci_failf (g, "%s: missing container ID", argv[0]);
  bool json = strcmp (format, "json") == 0;
  if (!json && strcmp (format, "table") != 0)
    return oci_failf (g, "%s: unknown format '%s' (table or json)", argv[0], format);
  if (i < argc && strcmp (argv[i], "--") == 0)
    i++;
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct oci_state st;
  if (load (g, root, id, &st))
    return 1;
  static pid_t pids[4096];
  size_t n = oci_state_status (&st) == OCI_STOPPED ? 0 : container_pids (&st, pids, 4096);
  oci_state_release (&st);
  if (json)
    {
      fputs ("[", stdout);
      for (size_t k = 0; k < n; k++)
        printf ("%s%d", k ? "," : "", (int)pids[k]);
      fputs ("]\n", stdout);
      return 0;
    }
  cleanup_free char **args = calloc ((size_t)(argc - i) + 3, sizeof (char *));
  if (args == NULL)
    return oci_failf (g, "out of memory");
  size_t na = 0;
  args[na++] = (char *)"ps";
  if (i >= argc)
    args[na++] = (char *)"-ef";
  for (; i < argc; i++)
    args[na++] = argv[i];
  cleanup_free char *out = NULL;
  csr_error *e = NULL;
  if (run_ps (args, &out, &e) < 0)
    return oci_fail (g, e);
  char *line = out;
  char *end = strchr (line, '\n');
  if (end)
    *end = '\0';
  /* The PID column: its index among the title's words. */
  cleanup_free char *title = strdup (line);
  if (title == NULL)
    return oci_failf (g, "out of memory");
  int col = -1, k = 0;
  for (char *save = NULL, *t = strtok_r (title, " \t", &save); t && col < 0;
       t = strtok_r (NULL, " \t", &save), k++)
    if (strcmp (t, "PID") == 0)
      col = k;
  if (col < 0)
    return oci_failf (g, "ps: no PID column in the output of ps %s", args[1] ? args[1] : "");
  puts (line);
  for (line = end ? end + 1 : NULL; line && *line; line = end ? end + 1 : NULL)
    {
      end = strchr (line, '\n');
      if (end)
        *end = '\0';
      long p = pid_field (line, col);
      for (size_t q = 0; q < n && p > 0; q++)
        if (pids[q] == (pid_t)p)
          {
            puts (line);
            break;
          }
    }
  return 0;
}
