/* csrun — what the OCI commands share: error reporting and the state root. */
#include "config.h"
#include "oci.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "util/cleanup.h"
#include "util/log.h"

/* The --log file, opened once by oci_log_init (close-on-exec: no container
 * process inherits it, and the jail's child closes it with the rest). */
static int log_fd = -1;

static void
log_line (const struct csr_global *g, const char *level, const char *msg)
{
  if (g->log_path == NULL || log_fd < 0)
    return;
  int fd = log_fd;
  cleanup_free char *now = oci_now_rfc3339 ();
  if (!g->log_json)
    {
      /* key=value as runc's text log: time="T" level=L msg="M" (quoted, with
       * \" and \\ escaped). */
      cleanup_free char *q = malloc (2 * strlen (msg) + 1);
      if (q == NULL)
        return;
      char *o = q;
      for (const char *m = msg; *m; m++)
        {
          if (*m == '"' || *m == '\\')
            *o++ = '\\';
          *o++ = *m == '\n' ? ' ' : *m;
        }
      *o = '\0';
      dprintf (fd, "time=\"%s\" level=%s msg=\"%s\"\n", now ? now : "", level, q);
      return;
    }
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return;
  yajl_gen_map_open (y);
  yajl_gen_string (y, (const unsigned char *)"msg", 3);
  yajl_gen_string (y, (const unsigned char *)msg, strlen (msg));
  yajl_gen_string (y, (const unsigned char *)"level", 5);
  yajl_gen_string (y, (const unsigned char *)level, strlen (level));
  yajl_gen_string (y, (const unsigned char *)"time", 4);
  yajl_gen_string (y, (const unsigned char *)(now ? now : ""), now ? strlen (now) : 0);
  yajl_gen_map_close (y);
  const unsigned char *buf;
  size_t len;
  if (yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok)
    dprintf (fd, "%.*s\n", (int)len, (const char *)buf);
  yajl_gen_free (y);
}

static void
log_sink (enum csr_log_level level, const char *msg, void *data)
{
  static const char *const names[] = { "error", "warning", "info", "debug" };
  log_line (data, names[level], msg);
}

int
oci_log_init (const struct csr_global *g)
{
  if (g->log_path == NULL)
    return 0;
  /* The file exists from the start, whatever happens later (runc makes it
   * when it parses --log; containerd and podman read it after a failure). */
  log_fd = open (g->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (log_fd < 0)
    {
      fprintf (stderr, "csrun: --log %s: %s\n", g->log_path, strerror (errno));
      return 1;
    }
  /* --debug (and the library's warnings) then go to the log, not stderr. */
  csr_log_set_sink (log_sink, (void *)g);
  return 0;
}

int
oci_fail_status (const struct csr_global *g, int status, csr_error *e)
{
  const char *msg = e ? csr_error_text (e) : "unknown error";
  fprintf (stderr, "csrun: %s\n", msg);
  log_line (g, "error", msg);
  csr_error_free (e);
  return status;
}

int
oci_fail (const struct csr_global *g, csr_error *e)
{
  return oci_fail_status (g, OCI_EXIT_ERROR, e);
}

int
oci_failf (const struct csr_global *g, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  csr_error *e = NULL;
  csr_error_setv (&e, 0, fmt, ap);
  va_end (ap);
  return oci_fail (g, e);
}

void
oci_warn (const struct csr_global *g, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  char *msg = NULL;
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  if (msg == NULL)
    return;
  if (g->log_path)
    log_line (g, "warning", msg);
  else
    fprintf (stderr, "csrun: warning: %s\n", msg);
  free (msg);
}

char *
oci_root (const struct csr_global *g)
{
  char *root = NULL;
  csr_error *e = NULL;
  if (oci_state_root (g->root, &root, &e) < 0)
    {
      oci_fail (g, e);
      return NULL;
    }
  return root;
}

bool
oci_run_is_bundle (const struct csr_global *g, int argc, char **argv)
{
  if (g->oci_flags)
    return true;
  static const char *const oci_only[]
      = { "--bundle",   "--detach",       "--pid-file",       "--console-socket", "--keep",
          "--no-pivot", "--preserve-fds", "--no-new-keyring", "--no-subreaper" };
  bool help = false;
  for (int i = 1; i < argc; i++)
    {
      const char *a = argv[i];
      /* Everything from the first operand on is FILE and its arguments (or
       * the container's id). */
      if (a[0] != '-' || strcmp (a, "-") == 0 || strcmp (a, "--") == 0)
        return false;
      if (strncmp (a, "-b", 2) == 0 || strcmp (a, "-d") == 0)
        return true;
      for (size_t k = 0; k < sizeof oci_only / sizeof oci_only[0]; k++)
        {
          size_t n = strlen (oci_only[k]);
          if (strncmp (a, oci_only[k], n) == 0 && (a[n] == '\0' || a[n] == '='))
            return true;
        }
      help |= strcmp (a, "-h") == 0 || strcmp (a, "--help") == 0;
    }
  /* No operand: the OCI run of the bundle in the working directory. */
  return !help && access ("config.json", F_OK) == 0;
}

int
oci_connect_console (const char *path, csr_error **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof sa.sun_path)
    return csr_error_set (err, ENAMETOOLONG, "console socket %s: path too long", path);
  strcpy (sa.sun_path, path);
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect (fd, (struct sockaddr *)&sa, sizeof sa) < 0)
    {
      csr_error_errno (err, "connect to the console socket %s", path);
      if (fd >= 0)
        close (fd);
      return -1;
    }
  return fd;
}
