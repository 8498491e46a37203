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
  /* issue 15: more descriptors, as fds 3, 4, ... (-1: that one is closed),
   * e.g. an attempt's verdict pipe and snippet (supervisor/launcher.h). */
#define CSR_SBX_MAX_EXTRA_FDS 5
  int extra[CSR_SBX_MAX_EXTRA_FDS];
  size_t n_extra;
  bool tty; /* fds[0] is a terminal's slave: it becomes the controlling one */
};

/* Records on the status pipe. */
struct csr_sbx_rec
{
  char type; /* 'P' pid (host), 'S' wait status, 'E' errno of the execve, 'F' set-up failed,
              * 'C' cpu time (ms) and 'M' peak RSS (KiB) of the process and its
              * reaped children, before 'S' */
  int32_t value;
};

struct csr_sbx_exec
{
  pid_t helper; /* outside, waits for the process */
  pid_t pid;    /* the process (host pid), 0 until known; its process group too */
  int status_fd;
  bool have_status, timed_out, exec_failed, setup_failed;
  int status, exec_errno;
  int64_t cpu_ms, maxrss_kib; /* -1: not known */
};

/* What a process outside joins to be in a running sandbox. */
struct csr_sbx_target
{
  pid_t init_pid;    /* the jail's init (host pid) */
  const int *ns_fds; /* its namespaces (layer.h's order), or NULL: by INIT_PID's /proc */
  const int *cg_fds; /* the cgroup.procs files of its cgroup (may be empty), or with */
  size_t n_cg;       /* CG_SELF its v1 "tasks" files (the process moves itself) */
  bool cg_self;
  const struct jail_snippet *sn; /* the sandbox's jail: seccomp program, rlimits, host_net */
};

/* What csr_sbx_join joins: bits of csr_sandbox_ns_names' indexes, and the cgroup. */
enum
{
  CSR_SBX_NS_USER = 1u << 0,
  CSR_SBX_NS_IPC = 1u << 1,
  CSR_SBX_NS_UTS = 1u << 2,
  CSR_SBX_NS_NET = 1u << 3,
  CSR_SBX_NS_PID = 1u << 4,
  CSR_SBX_NS_CGROUP = 1u << 5,
  CSR_SBX_NS_MNT = 1u << 6,
  CSR_SBX_JOIN_CGROUP = 1u << 7,
  CSR_SBX_JOIN_ALL = 0xffu,
};

/* In a forked process (never in the keeper itself): join T's cgroup and
 * namespaces as WHAT says (the net namespace never with --net host; the
 * user namespace first, the mount namespace last, which changes the root and
 * the working directory to the sandbox's /).  The pid namespace applies to
 * the children forked afterwards. */
int csr_sbx_join (const struct csr_sbx_target *t, unsigned what, csr_error **err);

/* Fork a process that joins T (WHAT), then returns FN (ARG)'s value as its
 * exit status (125 and the message on fd 2 when the join fails).  It dies
 * with the caller (PR_SET_PDEATHSIG) and is not dumpable.  Returns its
 * pid. */
pid_t csr_sbx_fork_in (const struct csr_sbx_target *t, unsigned what, int (*fn) (void *), void *arg,
                       csr_error **err);

/* Spawn R in the sandbox T. */
int csr_sbx_exec_spawn (const struct csr_sbx_target *t, const struct csr_sbx_exec_req *r,
                        struct csr_sbx_exec *x, csr_error **err);
/* Read what the status pipe has (non-blocking); 1 when the exec is over
 * (the helper is reaped), 0 not yet. */
int csr_sbx_exec_poll (struct csr_sbx_exec *x);
/* Kill the process's group (and the process). */
void csr_sbx_exec_kill (struct csr_sbx_exec *x);

#endif
