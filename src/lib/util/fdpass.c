#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

union fdpass_cmsg
{
  char buf[CMSG_SPACE (sizeof (int) * CSR_FDPASS_MAX)];
  struct cmsghdr align;
};

ssize_t
csr_recv_fds (int sock, void *data, size_t len, int *fds, size_t max, size_t *n)
{
  *n = 0;
  struct iovec iov = { .iov_base = data, .iov_len = len };
  union fdpass_cmsg u;
  memset (&u, 0, sizeof u);
  struct msghdr msg
      = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  ssize_t r;
  while ((r = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if (r < 0)
    return -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&msg); cm; cm = CMSG_NXTHDR (&msg, cm))
    if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
      {
        size_t k = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
        for (size_t i = 0; i < k; i++)
          {
            int fd;
            memcpy (&fd, CMSG_DATA (cm) + i * sizeof (int), sizeof fd);
            if (*n < max)
              fds[(*n)++] = fd;
            else
              close (fd);
          }
      }
  return r;
}

ssize_t
csr_recv_fd (int sock, void *data, size_t len, int *fd)
{
  size_t n;
  ssize_t r = csr_recv_fds (sock, data, len, fd, 1, &n);
  if (r < 0 || n == 0)
    *fd = -1;
  return r;
}

/* One sendmsg of DATA with the N_FDS (at most CSR_FDPASS_MAX) descriptors FDS. */
static ssize_t
send_msg (int sock, const void *data, size_t len, const int *fds, size_t n_fds)
{
  if (n_fds > CSR_FDPASS_MAX)
    {
      errno = EINVAL;
      return -1;
    }
  struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
  union fdpass_cmsg u;
  memset (&u, 0, sizeof u);
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (n_fds > 0)
    {
      msg.msg_control = u.buf;
      msg.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (cm), fds, sizeof (int) * n_fds);
    }
  ssize_t n;
  while ((n = sendmsg (sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
    ;
  return n;
}

ssize_t
csr_send_fd (int sock, const void *data, size_t len, int fd)
{
  return send_msg (sock, data, len, &fd, fd >= 0 ? 1 : 0);
}

int
csr_send_fds (int sock, const void *data, size_t len, const int *fds, size_t n_fds)
{
  ssize_t n = send_msg (sock, data, len, fds, n_fds);
  if (n < 0)
    return -1;
  const char *p = data;
  for (size_t off = (size_t)n; off < len;)
    {
      ssize_t w = send (sock, p + off, len - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return -1;
      off += (size_t)w;
    }
  return 0;
}
