/* csrun — seccomp user notification for OCI containers (see
 * seccomp-notify.h).  As crun does, a listenerPath alone (without any
 * SCMP_ACT_NOTIFY rule) still gets a listener: the agent then sees nothing. */
#include "config.h"
#include "seccomp-notify.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/fdpass.h"

int
csr_seccomp_listener_config (const char *json, size_t len, char **path, char **metadata,
                             csr_error **err)
{
  *path = *metadata = NULL;
  /* Profiles from podman are large and never have one: skip the parse. */
  if (json == NULL || memmem (json, len, "listenerPath", 12) == NULL)
    return 0;
  cleanup_free char *text = strndup (json, len);
  if (text == NULL)
    return csr_error_errno (err, "linux.seccomp");
  char msg[256] = "";
  yajl_val root = yajl_tree_parse (text, msg, sizeof msg);
  if (root == NULL || !YAJL_IS_OBJECT (root))
    {
      if (root)
        yajl_tree_free (root);
      return csr_error_set (err, 0, "linux.seccomp: malformed JSON");
    }
  const char *lp[] = { "listenerPath", NULL }, *lm[] = { "listenerMetadata", NULL };
  yajl_val p = yajl_tree_get (root, lp, yajl_t_string);
  yajl_val m = yajl_tree_get (root, lm, yajl_t_string);
  int r = 0;
  if (p && *p->u.string)
    {
      *path = strdup (p->u.string);
      *metadata = strdup (m ? m->u.string : "");
      if (*path == NULL || *metadata == NULL)
        {
          free (*path);
          free (*metadata);
          *path = *metadata = NULL;
          r = csr_error_errno (err, "linux.seccomp");
        }
    }
  yajl_tree_free (root);
  return r;
}

int
csr_seccomp_load_filter (const void *prog, bool listener, csr_error **err)
{
  if (!listener)
    {
      if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, prog) < 0)
        return csr_error_errno (err, "load the seccomp filter");
      return 0;
    }
  long fd = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, prog);
  if (fd < 0)
    return csr_error_errno (err, "load the seccomp filter with a listener (SCMP_ACT_NOTIFY)");
  /* The listener must not outlive the exec: the container would answer its
   * own notifications. */
  if (fcntl ((int)fd, F_SETFD, FD_CLOEXEC) < 0)
    {
      int saved = errno;
      close ((int)fd);
      errno = saved;
      return csr_error_errno (err, "seccomp listener: FD_CLOEXEC");
    }
  return (int)fd;
}

int
csr_seccomp_pass_fd (int sock, int fd, const void *data, size_t len, csr_error **err)
{
  ssize_t n = csr_send_fd (sock, data, len, fd);
  if (n < 0)
    return csr_error_errno (err, "send the seccomp listener");
  if ((size_t)n != len)
    return csr_error_set (err, EIO, "send the seccomp listener: short write");
  return 0;
}

ssize_t
csr_seccomp_recv_fd (int sock, void *data, size_t len, int *fd, csr_error **err)
{
  ssize_t n = csr_recv_fd (sock, data, len, fd);
  if (n < 0)
    return csr_error_errno (err, "receive the seccomp listener");
  return n;
}

/* {"ociVersion":"0.2.0","fds":["seccompFd"],"pid":PID,"metadata":M,"state":STATE} */
static char *
process_state (pid_t pid, const char *metadata, const char *state_json)
{
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return NULL;
#define STR(s) yajl_gen_string (y, (const unsigned char *)(s), strlen (s))
  yajl_gen_map_open (y);
  /* The version of the container process state's schema (the spec's
   * example, and what crun sends). */
  STR ("ociVersion");
  STR ("0.2.0");
  STR ("fds");
  yajl_gen_array_open (y);
  STR ("seccompFd");
  yajl_gen_array_close (y);
  STR ("pid");
  yajl_gen_integer (y, (long long)pid);
  STR ("metadata");
  STR (metadata ? metadata : "");
  yajl_gen_map_close (y);
#undef STR
  const unsigned char *buf;
  size_t len;
  char *out = NULL;
  /* The generated object without its closing brace, then the state. */
  if (yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok && len > 1
      && asprintf (&out, "%.*s,\"state\":%s}", (int)(len - 1), (const char *)buf, state_json) < 0)
    out = NULL;
  yajl_gen_free (y);
  return out;
}

int
csr_seccomp_agent_connect (const char *path, csr_error **err)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  if (strlen (path) >= sizeof addr.sun_path)
    return csr_error_set (err, ENAMETOOLONG, "seccomp listenerPath %s", path);
  strcpy (addr.sun_path, path);
  int sock = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0)
    return csr_error_errno (err, "seccomp agent: socket");
  if (connect (sock, (struct sockaddr *)&addr, sizeof addr) < 0)
    {
      int saved = errno;
      close (sock);
      errno = saved;
      return csr_error_errno (err, "failed to connect with seccomp agent at listenerPath %s", path);
    }
  return sock;
}

int
csr_seccomp_agent_send (int sock, int listener, pid_t pid, const char *metadata,
                        const char *state_json, csr_error **err)
{
  cleanup_free char *msg = process_state (pid, metadata, state_json ? state_json : "{}");
  if (msg == NULL)
    return csr_error_set (err, ENOMEM, "the container process state");
  if (csr_seccomp_pass_fd (sock, listener, msg, strlen (msg), err) < 0)
    return csr_error_wrap (err, "seccomp agent");
  return 0;
}

int
csr_seccomp_listener_send (const char *path, int listener, pid_t pid, const char *metadata,
                           const char *state_json, csr_error **err)
{
  cleanup_close int sock = csr_seccomp_agent_connect (path, err);
  if (sock < 0)
    return -1;
  if (csr_seccomp_agent_send (sock, listener, pid, metadata, state_json, err) < 0)
    return csr_error_wrap (err, "at %s", path);
  return 0;
}
