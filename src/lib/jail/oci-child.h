/* csrun — the container process of `csrun create` (see oci-child.c). */
#ifndef CSRUN_OCI_CHILD_H
#define CSRUN_OCI_CHILD_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"
#include "launch.h"
#include "oci-jail.h"
#include "spec.h"

struct oci_config;

/* The last steps of a container process (create's and exec's), in its
 * namespaces and root: the console pty (CONSOLE: connected socket or -1),
 * cwd, the executable found through the process's PATH (into EXE), rlimits,
 * umask, seccomp when no_new_privs is off, user and capability sets, fds 3 ..
 * 3+PRESERVE_FDS-1 kept and the rest closed at exec. */
int csr_oci_prepare_process (const struct oci_config *c, const void *seccomp_bpf, int console,
                             int preserve_fds, char *exe, size_t exe_size, csr_error **err);
/* The same with LISTENER_SOCK >= 0 (linux.seccomp.listenerPath): the filter
 * is loaded here with a listener (before the capabilities change without
 * no_new_privs, after them with it), whose fd goes at once over
 * LISTENER_SOCK as a CSR_SYNC_SECCOMP message and is closed; the caller
 * then passes NULL as csr_oci_exec_process's SECCOMP_BPF. */
int csr_oci_prepare_process_notify (const struct oci_config *c, const void *seccomp_bpf,
                                    int listener_sock, int console, int preserve_fds, char *exe,
                                    size_t exe_size, csr_error **err);
/* Seccomp when no_new_privs is on, an empty signal mask, execve.  On failure
 * a line on stderr, the exit code as one byte on STATUS_FD (when >= 0: a
 * close-on-exec pipe, whose end-of-file without a byte means the execve
 * happened), and exit 127 (not found) or 126 (125: seccomp). */
__attribute__ ((noreturn)) void csr_oci_exec_process (const struct oci_config *c,
                                                      const void *seccomp_bpf, const char *exe,
                                                      int status_fd);

/* The OCI face of one launch (oci-jail.c fills it; the entry reads SPEC
 * and SECCOMP_LISTENER, the parent side the rest). */
struct csr_oci_launch
{
  const struct csr_oci_spec *spec;
  bool seccomp_listener; /* load seccomp_bpf with a listener, hand it over (CSR_SYNC_SECCOMP) */
  const struct csr_oci_create_ops *ops;
  const char *listener_path, *listener_metadata;
};

/* The launcher's entry for a container (FACE: a struct csr_oci_launch).
 * Protocol on LC->syncfd after the go: when the config has
 * createContainer or startContainer hooks, read one message holding the
 * state JSON; set up; with prestart or createRuntime hooks send
 * CSR_SYNC_HOOKS and read 'H'; send CSR_SYNC_READY (or CSR_SYNC_ERROR);
 * then wait on the exec FIFO and execve.  Never returns. */
__attribute__ ((noreturn)) void csr_oci_entry (const struct jail_spec *spec, void *face,
                                               const struct csr_launch_child *lc);

#endif
