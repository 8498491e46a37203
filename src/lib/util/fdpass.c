#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

ssize_t
csr_recv_fd (int sock, void *data, size_t len, int *fd)
{
  *fd = -1;
  struct iovec iov = { .iov_base = data, .iov_len = len };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  memset (&u, 0, sizeof u);
  struct msghdr msg
      = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  ssize_t n;
  while ((n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if (n < 0)
    return -1;
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
  if (cm != NULL && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS
      && cm->cmsg_len == CMSG_LEN (sizeof (int)))
    memcpy (fd, CMSG_DATA (cm), sizeof *fd);
  return n;
}

/* One sendmsg of DATA with the N_FDS (at most 8) descriptors FDS. */
static ssize_t
send_msg (int sock, const void *data, size_t len, const int *fds, size_t n_fds)
{
  if (n_fds > 8)
    {
      errno = EINVAL;
      return -1;
    }
  struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * 8)];
    struct cmsghdr align;
  } u;
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
