/* csrun — the one launcher under every face (the snippet jail, the OCI
 * container): clone into the new namespaces and the cgroup, write the id
 * maps, give the go, relay set-up errors child -> parent, wait for READY
 * under one timeout, reap on failure.  A face is an entry function the
 * launcher calls in the child, plus optional parent-side steps (see struct
 * csr_launch); the model is crun's libcrun_run_linux_container (container,
 * entrypoint, ...). */
#ifndef CSRUN_JAIL_LAUNCH_H
#define CSRUN_JAIL_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"
#include "spec.h"

/* The sync protocol: one message format on a SOCK_SEQPACKET socket pair.
 * Parent -> child: the go byte 'G' (id maps written, cgroup entered), and
 * whatever a face adds (the OCI state document, the hooks' 'H').
 * Child -> parent: these messages. */
enum csr_sync_type
{
  CSR_SYNC_ERROR = 1,   /* set-up failed: err + text */
  CSR_SYNC_READY = 2,   /* set up: the payload has been exec'ed / the container waits for start */
  CSR_SYNC_EXIT = 3,    /* snippet: the payload ended: status = wait status */
  CSR_SYNC_HOOKS = 4,   /* OCI: the namespaces exist; run prestart/createRuntime, then send 'H' */
  CSR_SYNC_PID = 5,     /* status = the process's pid (from the intermediate process) */
  CSR_SYNC_SECCOMP = 6, /* OCI: the seccomp listener is attached (SCM_RIGHTS) */
  CSR_SYNC_FD = 7,      /* a descriptor for the face (SCM_RIGHTS); status says which */
};

struct csr_sync_msg
{
  uint32_t type;
  int32_t err;    /* errno of the failed step */
  int32_t status; /* wait status for CSR_SYNC_EXIT, pid for CSR_SYNC_PID */
  char text[500];
};

#define CSR_LAUNCH_GO 'G'
/* Set-up (from the clone to READY, without the time the parent spends in
 * the face's own steps, e.g. hooks) that takes longer than this is stuck. */
#define CSR_LAUNCH_TIMEOUT_MS 60000

/* Send a message; best effort (the parent may be gone). */
void csr_sync_send (int fd, uint32_t type, int status, const csr_error *e);
/* In the child: relay E (the failed step and its errno) and _exit (125). */
__attribute__ ((noreturn)) void csr_launch_fail (int syncfd, csr_error *e);
/* Wait for the byte WANT from the parent; _exit (125) on anything else (the
 * parent is gone or gave up). */
void csr_launch_wait_byte (int syncfd, char want);

/* What the face's entry gets in the child. */
struct csr_launch_child
{
  int syncfd;  /* the child's end of the sync socket */
  bool joined; /* csr_launch.join was joined (by the intermediate process) */
};

/* A face's entry: runs in the child after the go byte, in the cgroup; never
 * returns (execve, or csr_launch_fail). */
typedef __attribute__ ((noreturn)) void (*csr_launch_entry_fn) (const struct jail_spec *spec,
                                                                void *face,
                                                                const struct csr_launch_child *lc);

/* A namespace joined by path. */
struct csr_launch_ns
{
  const char *path;
  int flag; /* CLONE_NEW* */
};

struct csr_launch
{
  const struct jail_spec *spec; /* the shared part: rootfs, id maps, seccomp, cgroup */
  void *face;                   /* the face's own part, handed to its callbacks */
  csr_launch_entry_fn entry;    /* the child side */
  uint64_t clone_flags;         /* namespaces to make (CLONE_NEW*) */
  bool write_idmaps;            /* a new user namespace: write spec's id maps before the go */
  /* Namespaces to join by path before CLONE_FLAGS are made (a pid or user
   * namespace, which clone can't join; the user namespace first): through an
   * intermediate process that joins them, unshares CLONE_FLAGS, forks the
   * entry's process and reports its pid (CSR_SYNC_PID).  pidfd is then -1. */
  const struct csr_launch_ns *join;
  size_t n_join;
  /* With JOIN: the intermediate clones the entry's process as our child
   * (CLONE_PARENT, the new namespaces made by that clone): it can be waited
   * for, has a pidfd and dies with us (issue 15: a sandbox whose jail joins
   * the user namespace that holds its --disk). */
  bool join_as_child;
  const char *what;  /* "jail", "container": names it in messages */
  bool prefix_error; /* relayed set-up errors read "WHAT set-up: ..." */
  int timeout_ms;    /* 0: CSR_LAUNCH_TIMEOUT_MS */
  /* Parent side, each optional.  BEFORE_GO: after the id maps and the
   * cgroup (e.g. oom_score_adj).  AFTER_GO: right after the go byte (e.g.
   * a message the entry reads first).  ON_MESSAGE: a message that is not
   * READY or ERROR, with the descriptor attached to it (FD, -1 if none:
   * the callback owns it); negative fails the launch. */
  int (*before_go) (void *face, pid_t pid, csr_error **err);
  int (*after_go) (void *face, pid_t pid, int syncfd, csr_error **err);
  int (*on_message) (void *face, pid_t pid, int syncfd, const struct csr_sync_msg *m, int fd,
                     csr_error **err);
};

struct csr_launched
{
  pid_t pid;  /* host pid of the entry's process */
  int pidfd;  /* its pidfd, or -1 */
  int syncfd; /* the parent's end of the sync socket */
};

/* Launch L and wait until its entry says READY.  On an error the child is
 * killed and reaped, and *ERR says which step failed (in the child: its
 * step and errno, relayed). */
int csr_launch (const struct csr_launch *l, struct csr_launched *out, csr_error **err);

#endif
