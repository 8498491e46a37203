#include "config.h"
#include "syscalls.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int
csr_pidfd_open (pid_t pid)
{
  return (int)syscall (__NR_pidfd_open, pid, 0);
}

int
csr_pidfd_send_signal (int pidfd, int sig)
{
  return (int)syscall (__NR_pidfd_send_signal, pidfd, sig, NULL, 0);
}

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

pid_t
csr_clone_into (uint64_t flags, int cgroup_fd, int *pidfd)
{
  int fd = -1;
  struct clone_args args;
  memset (&args, 0, sizeof args);
  args.flags = flags | CLONE_PIDFD | CLONE_INTO_CGROUP;
  args.pidfd = (uint64_t)(uintptr_t)&fd;
  args.exit_signal = SIGCHLD;
  args.cgroup = (uint64_t)cgroup_fd;
  pid_t pid = (pid_t)syscall (__NR_clone3, &args, sizeof args);
  if (pid > 0 && pidfd)
    *pidfd = fd;
  else if (pid > 0)
    close (fd);
  return pid;
}

pid_t
csr_clone (uint64_t flags, int *pidfd)
{
  int fd = -1;
  struct clone_args args;
  memset (&args, 0, sizeof args);
  args.flags = flags | CLONE_PIDFD;
  args.pidfd = (uint64_t)(uintptr_t)&fd;
  /* A sibling (CLONE_PARENT) gets the caller's own exit signal. */
  args.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  pid_t pid = (pid_t)syscall (__NR_clone3, &args, sizeof args);
  if (pid >= 0 || (errno != ENOSYS && errno != E2BIG))
    {
      if (pid > 0 && pidfd)
        *pidfd = fd;
      else if (pid > 0)
        close (fd);
      return pid;
    }
  /* Old kernel: plain clone(2) with a fork-like call (NULL stack). */
  pid = (pid_t)syscall (__NR_clone, (unsigned long)(flags | ((flags & CLONE_PARENT) ? 0 : SIGCHLD)),
                        NULL, NULL, NULL, 0);
  if (pid > 0 && pidfd)
    *pidfd = csr_pidfd_open (pid);
  return pid;
}

int
csr_pivot_root (const char *new_root, const char *put_old)
{
  return (int)syscall (__NR_pivot_root, new_root, put_old);
}

int
csr_close_range (unsigned int first, int cloexec_only)
{
  if (syscall (__NR_close_range, first, ~0U, cloexec_only ? CLOSE_RANGE_CLOEXEC : 0) == 0)
    return 0;
  /* Fallback: walk /proc/self/fd. */
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    return -1;
  int self = dirfd (d);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue;
      int fd = atoi (de->d_name);
      if (fd < (int)first || fd == self)
        continue;
      if (cloexec_only)
        fcntl (fd, F_SETFD, FD_CLOEXEC);
      else
        close (fd);
    }
  closedir (d);
  return 0;
}

void
csr_close_range_between (unsigned int first, unsigned int last)
{
  if (first > last)
    return;
  if (syscall (__NR_close_range, first, last, 0) == 0)
    return;
  long max = sysconf (_SC_OPEN_MAX);
  for (long fd = first; fd <= (long)last && fd < max; fd++)
    close ((int)fd);
}

void
csr_close_all_but (const int *keep, size_t n)
{
  unsigned lo = 3;
  for (;;)
    {
      unsigned next = ~0U;
      for (size_t i = 0; i < n; i++)
        if (keep[i] >= 0 && (unsigned)keep[i] >= lo && (unsigned)keep[i] < next)
          next = (unsigned)keep[i];
      if (next == ~0U)
        {
          csr_close_range_between (lo, ~0U);
          return;
        }
      if (next > lo)
        csr_close_range_between (lo, next - 1);
      lo = next + 1;
    }
}

bool
csr_child_exited (pid_t pid)
{
  siginfo_t si;
  memset (&si, 0, sizeof si);
  if (waitid (P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno == ECHILD;
  return si.si_pid == pid;
}
