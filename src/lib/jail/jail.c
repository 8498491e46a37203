#include "config.h"
#include "jail.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/syscalls.h"
#include "../cgroup/cgroup.h"
#include "child.h"
#include "idmap.h"

/* The cgroup namespace is unshared by the child itself, after the supervisor
 * has moved it into its cgroup, so that cgroup is the namespace's root. */
#define JAIL_NS_FLAGS                                                                              \
  (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

/* A set-up that takes longer than this is stuck (a hung mount, say). */
#define SETUP_TIMEOUT_MS 30000

void
jail_spec_init (struct jail_spec *spec)
{
  memset (spec, 0, sizeof *spec);
  spec->cwd = "/work";
  spec->hostname = "csrun";
  spec->tmp_size = 64ULL << 20;
  spec->tmp_inodes = 16384;
  spec->stdin_fd = spec->stdout_fd = spec->stderr_fd = -1;
  spec->oci_exec_fifo = spec->oci_console = -1;
}

static void
reap_failed (pid_t pid, int pidfd)
{
  if (pidfd >= 0)
    csr_pidfd_send_signal (pidfd, SIGKILL);
  else
    kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* Read set-up messages until the payload runs (READY) or set-up failed. */
static int
await_ready (int syncfd, csr_error **err)
{
  for (;;)
    {
      struct pollfd pfd = { .fd = syncfd, .events = POLLIN };
      int n = poll (&pfd, 1, SETUP_TIMEOUT_MS);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return csr_error_errno (err, "poll the jail's sync socket");
      if (n == 0)
        return csr_error_set (err, ETIMEDOUT, "jail set-up did not finish in %d s",
                              SETUP_TIMEOUT_MS / 1000);
      struct csr_sync_msg m;
      ssize_t r = recv (syncfd, &m, sizeof m, 0);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return csr_error_errno (err, "read the jail's sync socket");
      if (r == 0)
        return csr_error_set (err, 0, "the jail died during set-up without saying why");
      if ((size_t)r != sizeof m)
        return csr_error_set (err, 0, "short message on the jail's sync socket");
      m.text[sizeof m.text - 1] = '\0';
      if (m.type == CSR_SYNC_READY)
        return 0;
      if (m.type == CSR_SYNC_ERROR)
        return csr_error_set (err, m.err, "jail set-up: %s", m.text);
      /* EXIT before READY can't happen: init reports READY first. */
      return csr_error_set (err, 0, "unexpected message %u from the jail", m.type);
    }
}

int
csr_jail_start (const struct jail_spec *spec, struct csr_jail *jail, csr_error **err)
{
  struct jail_spec s = *spec;
  csr_idmap_default (&s, geteuid (), getegid ());
  jail->pid = -1;
  jail->pidfd = jail->syncfd = -1;
  if (s.argv == NULL || s.argv[0] == NULL || s.argv[0][0] != '/')
    return csr_error_set (err, EINVAL, "the jail's program must be an absolute path");
  struct stat st;
  if (s.rootfs_dir == NULL)
    return csr_error_set (err, EINVAL, "no rootfs given");
  if (stat (s.rootfs_dir, &st) < 0)
    return csr_error_errno (err, "rootfs %s", s.rootfs_dir);
  if (!S_ISDIR (st.st_mode))
    return csr_error_set (err, ENOTDIR, "rootfs %s", s.rootfs_dir);
  /* When the jail's root is not the rootfs owner (csrun as host root maps it
   * to an unprivileged id), the tree must be readable by others. */
  if (s.uid_map[0].outside != st.st_uid && (st.st_mode & 0005) != 0005)
    return csr_error_set (err, EACCES,
                          "rootfs %s must be readable and searchable by others (mode %03o): the "
                          "jail's root is host uid %u",
                          s.rootfs_dir, (unsigned)(st.st_mode & 0777),
                          (unsigned)s.uid_map[0].outside);
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "socketpair");
  cleanup_close int parent_end = sv[0];
  cleanup_close int child_end = sv[1];
  int pidfd = -1;
  uint64_t flags = s.host_net ? JAIL_NS_FLAGS & ~(uint64_t)CLONE_NEWNET : JAIL_NS_FLAGS;
  /* On cgroup v2 the jail starts in its cgroup; else the supervisor moves it. */
  int cgroup_fd = csr_cgroup_clone_fd (s.cgroup);
  pid_t pid = cgroup_fd >= 0 ? csr_clone_into (flags, cgroup_fd, &pidfd) : -1;
  bool in_cgroup = pid >= 0;
  int cg_fds[CSR_CG_V1_N];
  int n_cg_fds = 0;
  if (pid < 0)
    {
      n_cg_fds = csr_cgroup_self_enter_fds (s.cgroup, cg_fds, NULL);
      if (n_cg_fds > 0)
        in_cgroup = true;
      else
        n_cg_fds = 0; /* no fds: the supervisor moves the child */
      pid = csr_clone (flags, &pidfd);
      for (int i = 0; pid != 0 && i < n_cg_fds; i++)
        close (cg_fds[i]);
    }
  if (pid < 0)
    {
      if (errno == EPERM || errno == ENOSPC || errno == EUSERS)
        return csr_error_errno (err, "create the jail's namespaces (are unprivileged user "
                                     "namespaces enabled? see user.max_user_namespaces)");
      return csr_error_errno (err, "clone the jail");
    }
  if (pid == 0)
    {
      close (parent_end);
      csr_child_main (&s, child_end, cg_fds, n_cg_fds);
    }
  close (steal_fd (&child_end));
  if (csr_idmap_write (pid, &s, err) < 0
      || (s.cgroup != NULL && !in_cgroup && csr_cgroup_enter (s.cgroup, pid, err) < 0)
      || write (parent_end, "G", 1) != 1 || await_ready (parent_end, err) < 0)
    {
      if (err && *err == NULL)
        csr_error_errno (err, "start the jail");
      reap_failed (pid, pidfd);
      if (pidfd >= 0)
        close (pidfd);
      return -1;
    }
  jail->pid = pid;
  jail->pidfd = pidfd;
  jail->syncfd = steal_fd (&parent_end);
  return 0;
}

int
csr_jail_kill (struct csr_jail *jail, int sig)
{
  if (jail->pid <= 0)
    return 0;
  if (jail->pidfd >= 0)
    return csr_pidfd_send_signal (jail->pidfd, sig);
  return kill (jail->pid, sig);
}

int
csr_jail_kill_payload (struct csr_jail *jail)
{
  if (jail->pid <= 0)
    return 0;
  char path[64], buf[256];
  snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int)jail->pid, (int)jail->pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  int killed = 0;
  for (char *p = buf, *end; *p; p = end)
    {
      long pid = strtol (p, &end, 10);
      if (end == p)
        break;
      /* Init has not reaped its children yet, so these pids can't be reused. */
      if (pid > 0 && kill ((pid_t)pid, SIGKILL) == 0)
        killed++;
    }
  return killed;
}

int
csr_jail_wait (struct csr_jail *jail, struct csr_jail_exit *ex, csr_error **err)
{
  int status;
  struct rusage ru;
  memset (ex, 0, sizeof *ex);
  for (;;)
    {
      pid_t p = wait4 (jail->pid, &status, 0, &ru);
      if (p == jail->pid)
        break;
      if (p < 0 && errno != EINTR)
        return csr_error_errno (err, "wait for the jail");
    }
  jail->pid = -1;
  ex->cpu_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec
               + (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
  ex->maxrss_kib = (uint64_t)ru.ru_maxrss;
  /* The payload's own status, if init lived to report it. */
  struct csr_sync_msg m;
  ssize_t r;
  while ((r = recv (jail->syncfd, &m, sizeof m, MSG_DONTWAIT)) == (ssize_t)sizeof m)
    if (m.type == CSR_SYNC_EXIT)
      {
        status = m.status;
        break;
      }
  if (WIFEXITED (status))
    {
      ex->exited = true;
      ex->exit_code = WEXITSTATUS (status);
    }
  else if (WIFSIGNALED (status))
    ex->signal = WTERMSIG (status);
  return 0;
}

void
csr_jail_release (struct csr_jail *jail)
{
  if (jail->pid > 0)
    {
      csr_jail_kill (jail, SIGKILL);
      while (waitpid (jail->pid, NULL, 0) < 0 && errno == EINTR)
        ;
      jail->pid = -1;
    }
  if (jail->pidfd >= 0)
    close (jail->pidfd);
  if (jail->syncfd >= 0)
    close (jail->syncfd);
  jail->pidfd = jail->syncfd = -1;
}
