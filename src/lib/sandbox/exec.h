/* csrun — a process exec'd into a running sandbox (the keeper's side):
 * a helper outside joins the sandbox's cgroup and namespaces (jail/enter.c),
 * forks the process, which is confined as the jail's payload is (no
 * capabilities, no_new_privs, the seccomp filter, the rlimits), and reports
 * on a status pipe: its pid, then its wait status. */
#ifndef CSRUN_SANDBOX_EXEC_H
#define CSRUN_SANDBOX_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../jail/spec.h"
#include "../util/error.h"

struct csr_sbx_exec_req
{
  char **argv; /* argv[0] looked up in the sandbox's PATH */
  char **envp; /* the whole environment */
  const char *cwd;
  uid_t uid;
  gid_t gid;
  int fds[3]; /* stdin, stdout, stderr (the caller's) */
};

/* Records on the status pipe. */
struct csr_sbx_rec
{
  char type; /* 'P' pid (host), 'S' wait status, 'E' errno of the execve, 'F' set-up failed */
  int32_t value;
};

struct csr_sbx_exec
{
  pid_t helper; /* outside, waits for the process */
  pid_t pid;    /* the process (host pid), 0 until known; its process group too */
  int status_fd;
  bool have_status, timed_out, exec_failed, setup_failed;
  int status, exec_errno;
};

/* Spawn R in the sandbox whose init is INIT_PID (NS_FDS: its namespaces, layer.h's order, or NULL);
 * CG_FDS: the cgroup.procs files of its cgroup (may be empty), or with CG_SELF its v1
 * "tasks" files (the helper moves itself); SN: the sandbox's jail (seccomp
 * program, rlimits). */
int csr_sbx_exec_spawn (pid_t init_pid, const int *ns_fds, const int *cg_fds, size_t n_cg,
                        bool cg_self, const struct jail_snippet *sn,
                        const struct csr_sbx_exec_req *r, struct csr_sbx_exec *x, csr_error **err);
/* Read what the status pipe has (non-blocking); 1 when the exec is over
 * (the helper is reaped), 0 not yet. */
int csr_sbx_exec_poll (struct csr_sbx_exec *x);
/* Kill the process's group (and the process). */
void csr_sbx_exec_kill (struct csr_sbx_exec *x);

#endif
