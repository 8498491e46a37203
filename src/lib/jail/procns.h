/* csrun — other processes' namespaces, through /proc: whether one of them
 * is the caller's own, and which processes share a pid namespace. */
#ifndef CSRUN_PROCNS_H
#define CSRUN_PROCNS_H

#include <stddef.h>
#include <sys/types.h>

/* Whether the KIND namespace of PID (a name in /proc/PID/ns: "pid", "mnt",
 * ...) is the caller's: 1 yes, 0 no (also when ours can't be read), -1 with
 * errno when PID's can't be read (ENOENT: no such process, or a kernel
 * without that kind). */
int csr_procns_is_ours (pid_t pid, const char *kind);

/* The processes in the pid namespace of PID, at most CAP of them into OUT:
 * their number, 0 when PID is gone.  A PID in the caller's own pid
 * namespace (none of its own) gives PID only, never every process of the
 * caller's namespace. */
size_t csr_procns_pid_members (pid_t pid, pid_t *out, size_t cap);

#endif
