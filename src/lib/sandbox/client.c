/* csrun — talking to a sandbox's keeper: one JSON line per request on its
 * control socket, descriptors passed with SCM_RIGHTS, one JSON line back. */
#include "config.h"
#include "sandbox.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fdpass.h"
#include "../util/json.h"

int
csr_sandbox_connect (int dirfd, const char *req, const int *fds, size_t n_fds, csr_error **err)
{
  struct sockaddr_un sa = { .sun_family = AF_UNIX };
  /* Through the directory's descriptor: sun_path is short. */
  snprintf (sa.sun_path, sizeof sa.sun_path, "/proc/self/fd/%d/ctl.sock", dirfd);
  int s = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return csr_error_errno (err, "socket");
  if (connect (s, (struct sockaddr *)&sa, sizeof sa) < 0)
    {
      csr_error_errno (err, "connect to the sandbox's keeper");
      close (s);
      return -1;
    }
  size_t len = strlen (req);
  cleanup_free char *line = malloc (len + 1);
  if (line == NULL)
    {
      close (s);
      return csr_error_set (err, ENOMEM, "request");
    }
  memcpy (line, req, len);
  line[len] = '\n';
  /* The first message carries the descriptors; the rest of a long line follows. */
  if (csr_send_fds (s, line, len + 1, fds, n_fds <= CSR_FDPASS_MAX ? n_fds : 0) < 0)
    {
      csr_error_errno (err, "send the request to the sandbox's keeper");
      close (s);
      return -1;
    }
  return s;
}

int
csr_sandbox_read_reply_fds (int sock, int timeout_ms, char **line, int *fds, size_t max_fds,
                            size_t *n_fds, csr_error **err)
{
  *line = NULL;
  size_t got = 0;
  if (n_fds)
    *n_fds = 0;
  size_t cap = 4096, n = 0;
  char *buf = malloc (cap);
  if (buf == NULL)
    return csr_error_set (err, ENOMEM, "reply");
  uint64_t deadline = timeout_ms >= 0 ? csr_mono_ms () + (uint64_t)timeout_ms : 0;
  int rc = -1;
  for (;;)
    {
      int wait = -1;
      if (timeout_ms >= 0)
        {
          uint64_t now = csr_mono_ms ();
          wait = now >= deadline ? 0 : (int)(deadline - now);
        }
      struct pollfd p = { sock, POLLIN, 0 };
      int pr = poll (&p, 1, wait);
      if (pr < 0 && errno == EINTR)
        continue;
      if (pr == 0)
        {
          csr_error_set (err, ETIMEDOUT, "the sandbox's keeper did not answer");
          break;
        }
      if (n + 1 >= cap)
        {
          char *nb = cap >= 1 << 16 ? NULL : realloc (buf, cap * 2);
          if (nb == NULL)
            {
              csr_error_set (err, cap >= 1 << 16 ? E2BIG : ENOMEM,
                             cap >= 1 << 16 ? "the keeper's reply is too long" : "reply");
              break;
            }
          cap *= 2;
          buf = nb;
        }
      /* Descriptors come with the reply's first bytes (SCM_RIGHTS). */
      int more[CSR_FDPASS_MAX];
      size_t k = 0;
      ssize_t r = csr_recv_fds (sock, buf + n, cap - n - 1, more, CSR_FDPASS_MAX, &k);
      for (size_t i = 0; i < k; i++)
        if (fds && got < max_fds)
          fds[got++] = more[i];
        else
          close (more[i]);
      if (r <= 0)
        {
          csr_error_set (err, r < 0 ? errno : EPIPE, "the sandbox's keeper closed the connection");
          break;
        }
      n += (size_t)r;
      buf[n] = '\0';
      char *nl = memchr (buf, '\n', n);
      if (nl)
        {
          *nl = '\0';
          *line = steal_pointer (&buf);
          rc = 0;
          break;
        }
    }
  free (buf);
  if (rc < 0)
    while (got > 0)
      close (fds[--got]);
  if (n_fds)
    *n_fds = got;
  return rc;
}

int
csr_sandbox_read_reply (int sock, int timeout_ms, char **line, csr_error **err)
{
  return csr_sandbox_read_reply_fds (sock, timeout_ms, line, NULL, 0, NULL, err);
}

/* Connect, send REQ with FDS, read the reply's *LINE and parse it into
 * *TREE (NULL when it is not JSON). */
static int
exchange (int dirfd, const char *req, const int *fds, size_t n_fds, int timeout_ms, char **line,
          yajl_val *tree, csr_error **err)
{
  *tree = NULL;
  cleanup_close int s = csr_sandbox_connect (dirfd, req, fds, n_fds, err);
  if (s < 0)
    return -1;
  if (csr_sandbox_read_reply (s, timeout_ms, line, err) < 0)
    return -1;
  char ebuf[64];
  *tree = yajl_tree_parse (*line, ebuf, sizeof ebuf);
  return 0;
}

int
csr_sandbox_request (int dirfd, const char *req, const int *fds, size_t n_fds, int timeout_ms,
                     yajl_val *reply, csr_error **err)
{
  cleanup_free char *line = NULL;
  return exchange (dirfd, req, fds, n_fds, timeout_ms, &line, reply, err);
}

/* csr_sandbox_call: the reply's line into *REPLY and its tree into *TREE
 * (each when not NULL). */
static int
call (int dirfd, const char *req, int timeout_ms, char **reply, yajl_val *tree, csr_error **err)
{
  cleanup_free char *line = NULL;
  yajl_val t;
  if (exchange (dirfd, req, NULL, 0, timeout_ms, &line, &t, err) < 0)
    return -1;
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (t == NULL || msg)
    {
      csr_error_set (err, 0, "%s", msg ? msg : "the keeper's reply is not JSON");
      yajl_tree_free (t);
      return -1;
    }
  if (reply)
    *reply = steal_pointer (&line);
  if (tree)
    *tree = t;
  else
    yajl_tree_free (t);
  return 0;
}

int
csr_sandbox_call (int dirfd, const char *req, int timeout_ms, char **reply, csr_error **err)
{
  *reply = NULL;
  return call (dirfd, req, timeout_ms, reply, NULL, err);
}

yajl_val
csr_sandbox_call_json (int dirfd, const char *req, int timeout_ms, csr_error **err)
{
  yajl_val t = NULL;
  return call (dirfd, req, timeout_ms, NULL, &t, err) < 0 ? NULL : t;
}
