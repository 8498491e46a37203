/* csrun — seccomp user notification (SCMP_ACT_NOTIFY) for OCI containers:
 * the filter is loaded with a listener, the jail hands the listener's fd to
 * csrun, and csrun sends it with the container's state to the agent at
 * linux.seccomp.listenerPath (runtime-spec config-linux.md, "The Container
 * Process State"). */
#ifndef CSRUN_SECCOMP_NOTIFY_H
#define CSRUN_SECCOMP_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../util/error.h"

/* listenerPath and listenerMetadata of a linux.seccomp object (JSON); *PATH
 * NULL when there is no listener ("" or absent).  Both malloc'ed. */
int csr_seccomp_listener_config (const char *json, size_t len, char **path, char **metadata,
                                 csr_error **err);
/* Load PROG (a struct sock_fprog *) into this thread: with LISTENER, by
 * seccomp(2) with SECCOMP_FILTER_FLAG_NEW_LISTENER, returning the listener
 * (close-on-exec); else by prctl, returning 0.  -1 with *ERR. */
int csr_seccomp_load_filter (const void *prog, bool listener, csr_error **err);
/* Send FD over the AF_UNIX socket SOCK with the bytes DATA[LEN] (SCM_RIGHTS). */
int csr_seccomp_pass_fd (int sock, int fd, const void *data, size_t len, csr_error **err);
/* Receive up to LEN bytes into DATA and one fd (*FD, -1 when none came);
 * returns the byte count (0 at end-of-file). */
ssize_t csr_seccomp_recv_fd (int sock, void *data, size_t len, int *fd, csr_error **err);
/* A connected socket to the agent at PATH (a caller about to enter another
 * mount namespace connects first). */
int csr_seccomp_agent_connect (const char *path, csr_error **err);
/* Send the container process state {ociVersion, fds: ["seccompFd"], pid,
 * metadata, state: STATE_JSON} with LISTENER attached over SOCK. */
int csr_seccomp_agent_send (int sock, int listener, pid_t pid, const char *metadata,
                            const char *state_json, csr_error **err);
/* Both: connect to PATH and send. */
int csr_seccomp_listener_send (const char *path, int listener, pid_t pid, const char *metadata,
                               const char *state_json, csr_error **err);

#endif
