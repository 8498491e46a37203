/* csrun — sd_notify (NOTIFY_SOCKET) for OCI containers (see notify.h).
 *
 * The runtime spec says nothing about NOTIFY_SOCKET; runc and crun both
 * proxy it, with different layouts.  csrun follows crun, whose tests check
 * it and which podman uses by default: the container's directory is mounted
 * at the NOTIFY_SOCKET path itself and the socket in it is "notify" (runc
 * mounts it at /run/notify and names it notify.sock).  `start` forwards
 * "READY=1" alone, as crun does (crun's tests expect that datagram), and then
 * "MAINPID=<the container's pid>", as runc does, so that systemd watches the
 * container's process rather than the runtime that exits. */
#include "config.h"

#include "notify.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/cleanup.h"

static int
notify_dir (const char *state_dir, const char *leaf, char **out, csr_error **err)
{
  if (asprintf (out, "%s/" OCI_NOTIFY_DIR "%s%s", state_dir, leaf ? "/" : "", leaf ? leaf : "") < 0)
    {
      *out = NULL;
      return csr_error_set (err, ENOMEM, "notify socket path");
    }
  return 0;
}

static bool
has_ns (const struct oci_config *c, int flag)
{
  for (size_t i = 0; i < c->n_namespaces; i++)
    if (c->namespaces[i].flag == flag)
      return true;
  return false;
}

/* The host id of container id 0 in MAP (N entries), or -1. */
static long
host_root (const struct oci_idmap *map, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (map[i].container_id == 0 && map[i].size > 0)
      return (long)map[i].host_id;
  return -1;
}

static int
set_env (struct oci_config *c, const char *entry, csr_error **err)
{
  char *copy = strdup (entry);
  if (copy == NULL)
    return csr_error_set (err, ENOMEM, "NOTIFY_SOCKET");
  for (size_t i = 0; i < c->n_env; i++)
    if (strncmp (c->env[i], "NOTIFY_SOCKET=", 14) == 0)
      {
        free (c->env[i]);
        c->env[i] = copy;
        return 0;
      }
  char **env = realloc (c->env, (c->n_env + 2) * sizeof *env);
  if (env == NULL)
    {
      free (copy);
      return csr_error_set (err, ENOMEM, "NOTIFY_SOCKET");
    }
  env[c->n_env++] = copy;
  env[c->n_env] = NULL;
  c->env = env;
  return 0;
}

static int
add_mount (struct oci_config *c, const char *source, const char *dest, csr_error **err)
{
  static const char *const opts[] = { "bind", "nosuid", "nodev", "noexec" };
  const size_t n_opts = sizeof opts / sizeof opts[0];
  struct oci_mount *m = realloc (c->mounts, (c->n_mounts + 1) * sizeof *m);
  if (m == NULL)
    return csr_error_set (err, ENOMEM, "the notify socket's mount");
  c->mounts = m;
  m = &c->mounts[c->n_mounts];
  memset (m, 0, sizeof *m);
  m->destination = strdup (dest);
  m->type = strdup ("bind");
  m->source = strdup (source);
  m->options = calloc (n_opts + 1, sizeof (char *));
  c->n_mounts++; /* released with the config from here on */
  if (m->destination == NULL || m->type == NULL || m->source == NULL || m->options == NULL)
    return csr_error_set (err, ENOMEM, "the notify socket's mount");
  for (size_t i = 0; i < n_opts; i++)
    {
      if ((m->options[i] = strdup (opts[i])) == NULL)
        return csr_error_set (err, ENOMEM, "the notify socket's mount");
      m->n_options = i + 1;
    }
  return 0;
}

int
oci_notify_prepare (struct oci_config *c, const char *state_dir, const char *path, csr_error **err)
{
  /* Without a mount namespace of its own there is nowhere to mount it. */
  if (path == NULL || path[0] != '/' || !has_ns (c, CLONE_NEWNS))
    return 0;
  if (strlen (path) + sizeof "/notify" > sizeof ((struct sockaddr_un *)0)->sun_path)
    return csr_error_set (err, ENAMETOOLONG, "NOTIFY_SOCKET %s: too long for a socket path", path);
  cleanup_free char *dir = NULL;
  if (notify_dir (state_dir, NULL, &dir, err) < 0)
    return -1;
  if (mkdir (dir, 0700) < 0)
    return csr_error_errno (err, "mkdir %s", dir);
  if (has_ns (c, CLONE_NEWUSER) && geteuid () == 0)
    {
      /* Its root must reach the socket (crun chowns it the same way). */
      long uid = host_root (c->uid_mappings, c->n_uid_mappings);
      long gid = host_root (c->gid_mappings, c->n_gid_mappings);
      if (uid >= 0 && gid >= 0 && chown (dir, (uid_t)uid, (gid_t)gid) < 0)
        return csr_error_errno (err, "chown %s to %ld:%ld", dir, uid, gid);
    }
  cleanup_free char *entry = NULL;
  if (asprintf (&entry, "NOTIFY_SOCKET=%s/notify", path) < 0)
    return csr_error_set (err, ENOMEM, "NOTIFY_SOCKET");
  if (add_mount (c, dir, path, err) < 0 || set_env (c, entry, err) < 0)
    return -1;
  return 0;
}

int
oci_notify_listen (const char *state_dir, int *fd_out, csr_error **err)
{
  *fd_out = -1;
  cleanup_free char *dir = NULL, *sock = NULL;
  if (notify_dir (state_dir, NULL, &dir, err) < 0
      || notify_dir (state_dir, "notify", &sock, err) < 0)
    return -1;
  struct stat st;
  if (lstat (dir, &st) < 0 || !S_ISDIR (st.st_mode))
    return 0;
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  if (strlen (sock) >= sizeof a.sun_path)
    return csr_error_set (err, ENAMETOOLONG, "notify socket %s: path too long", sock);
  strcpy (a.sun_path, sock);
  cleanup_close int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return csr_error_errno (err, "notify socket");
  if (unlink (sock) < 0 && errno != ENOENT)
    return csr_error_errno (err, "remove the old notify socket %s", sock);
  if (bind (fd, (struct sockaddr *)&a, sizeof a) < 0)
    return csr_error_errno (err, "bind the notify socket %s", sock);
  if (chmod (sock, 0777) < 0)
    return csr_error_errno (err, "chmod %s", sock);
  *fd_out = steal_fd (&fd);
  return 0;
}

/* Whether the datagram BUF[0..N) has a line READY=1. */
static bool
says_ready (const char *buf, size_t n)
{
  for (size_t i = 0; i + 7 <= n; i++)
    if ((i == 0 || buf[i - 1] == '\n') && memcmp (buf + i, "READY=1", 7) == 0
        && (i + 7 == n || buf[i + 7] == '\n'))
      return true;
  return false;
}

static int
send_host (const char *host_path, pid_t pid, csr_error **err)
{
  struct sockaddr_un a = { .sun_family = AF_UNIX };
  size_t len = strlen (host_path);
  if (len == 0 || len >= sizeof a.sun_path)
    return csr_error_set (err, EINVAL, "NOTIFY_SOCKET '%s': not a socket path", host_path);
  memcpy (a.sun_path, host_path, len);
  socklen_t alen = (socklen_t)sizeof a;
  if (host_path[0] == '@')
    {
      /* systemd's notation for an abstract socket. */
      a.sun_path[0] = '\0';
      alen = (socklen_t)(offsetof (struct sockaddr_un, sun_path) + len);
    }
  cleanup_close int fd = socket (AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return csr_error_errno (err, "socket for NOTIFY_SOCKET");
  char mainpid[32];
  int n = snprintf (mainpid, sizeof mainpid, "MAINPID=%d", (int)pid);
  if (sendto (fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&a, alen) != 7
      || sendto (fd, mainpid, (size_t)n, MSG_NOSIGNAL, (struct sockaddr *)&a, alen) != n)
    return csr_error_errno (err, "forward READY=1 to NOTIFY_SOCKET %s", host_path);
  return 0;
}

int
oci_notify_forward (int fd, int pidfd, pid_t pid, const char *host_path, csr_error **err)
{
  for (;;)
    {
      struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
      /* Without a pidfd, look at the pid every 100 ms. */
      int r = poll (p, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 100);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return csr_error_errno (err, "wait on the notify socket");
      if (p[0].revents & POLLIN)
        {
          char buf[4096];
          ssize_t n = recv (fd, buf, sizeof buf, MSG_DONTWAIT);
          if (n < 0 && errno != EAGAIN && errno != EINTR)
            return csr_error_errno (err, "read the notify socket");
          if (n > 0 && says_ready (buf, (size_t)n))
            return send_host (host_path, pid, err) < 0 ? -1 : 1;
          continue;
        }
      if (pidfd >= 0 ? (p[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0
                     : kill (pid, 0) < 0 && errno == ESRCH)
        return 0;
    }
}
