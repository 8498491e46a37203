/* csrun — raw system calls that glibc 2.36 does not wrap, with fallbacks;
 * closing descriptors; whether a child has exited. */
#ifndef CSRUN_SYSCALLS_H
#define CSRUN_SYSCALLS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* clone3 with CLONE_PIDFD when available, else clone(2) + pidfd_open, else pidfd -1.
 * Returns 0 in the child, the pid in the parent, -1 on error (errno set).
 * The child runs on a copy of the address space (fork-like, no new stack). */
pid_t csr_clone (uint64_t flags, int *pidfd);
/* The same, started in the cgroup v2 directory CGROUP_FD
 * (clone3 CLONE_INTO_CGROUP, Linux 5.7): no migration afterwards.  Returns
 * -1 with errno set when that is not possible (no clone3, no cgroup v2
 * support, not permitted): the caller then clones without it and moves the
 * child itself. */
pid_t csr_clone_into (uint64_t flags, int cgroup_fd, int *pidfd);
int csr_pidfd_open (pid_t pid);
int csr_pidfd_send_signal (int pidfd, int sig);
int csr_pivot_root (const char *new_root, const char *put_old);
/* close_range(first, ~0U, flags) with a /proc/self/fd fallback. */
int csr_close_range (unsigned int first, int cloexec_only);
/* Close every fd in [first, last] (close_range, else one by one up to the rlimit). */
void csr_close_range_between (unsigned int first, unsigned int last);
/* Close every fd from 3 up but the N in KEEP (in any order; negative ones ignored). */
void csr_close_all_but (const int *keep, size_t n);
/* Has the child PID exited?  It stays a zombie (waitid with WNOWAIT: its
 * process group can't go away under the caller) until it is reaped.
 * ECHILD counts as exited: someone else (a SIGCHLD handler) reaped it. */
bool csr_child_exited (pid_t pid);

#endif
