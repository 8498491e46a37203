/* csrun — warm jails (issue 17): a zygote, a jailed Python interpreter that
 * has loaded the gate and forks each item's jail, so that an item pays
 * neither the interpreter's start nor the launcher's processes.
 *
 * The zygote (policies/zygote.py) is the payload of a jail of its own,
 * started by the one launcher (csr_jail_start): the rootfs read-only, its
 * own user, mount, pid, network, ipc, uts and cgroup namespaces, no
 * capabilities, no_new_privs; but its /proc has no masks and it has no
 * seccomp filter, because the jails it forks make their own namespaces and
 * mounts before they load the item's filter.  It never runs anything but
 * zygote.py.  For each item csrun sends it a request on a socketpair only
 * csrun holds; the forked child makes the item's jail (a nested user
 * namespace and its own mount, pid, network, ipc, uts and cgroup
 * namespaces, the zygote's own tree, a snippet jail's, with the item's
 * /proc, /dev/shm, /dev/pts, /tmp and working directory over it, the
 * item's cgroup, rlimits, no capabilities, no_new_privs, the item's
 * seccomp filter) and says READY.
 * csrun then checks from outside that the payload is confined
 * (csr_zygote_check) before it sends any code (csr_zygote_go).  The jail's
 * init reports the payload's end on the sync socket as csrun's own init
 * does (CSR_SYNC_EXIT, its text "CPU_US MAXRSS_KIB"). */
#ifndef CSRUN_ZYGOTE_H
#define CSRUN_ZYGOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../util/error.h"
#include "jail.h"
#include "spec.h"

/* The namespaces a process is in: the (device, inode) of /proc/PID/ns/KIND
 * for each of CSR_ZYGOTE_NS (0 when it can't be read). */
#define CSR_ZYGOTE_N_NS 7
extern const char *const csr_zygote_ns_kinds[CSR_ZYGOTE_N_NS]; /* user mnt pid net ipc uts cgroup */
struct csr_ns_ids
{
  unsigned long long dev[CSR_ZYGOTE_N_NS], ino[CSR_ZYGOTE_N_NS];
};
/* Fill *IDS for PID (0: the calling process). */
void csr_ns_ids_read (pid_t pid, struct csr_ns_ids *ids);

struct csr_zygote
{
  struct csr_jail jail;  /* the zygote's jail (its init) */
  int ctl;               /* the control socket */
  pid_t pid;             /* the zygote, as this process sees it */
  struct csr_ns_ids ns;  /* its namespaces */
  struct csr_ns_ids own; /* those of the process that started it */
};

/* Start a zygote in a jail made from BASE (its rootfs, package layer,
 * environment, id maps, tmp sizes; what it has of a seccomp program,
 * cgroup, files, binds and streams is not used), with GATE_FD the
 * precompiled gate and BOOT the bootstrap's function that loads it
 * (gatecode.h).  Waits until it has loaded the gate. */
int csr_zygote_start (const struct jail_snippet *base, const char *boot, int gate_fd,
                      struct csr_zygote *z, csr_error **err);
/* End it (and every jail it forked); safe twice. */
void csr_zygote_stop (struct csr_zygote *z);

/* One warm jail. */
struct csr_warm
{
  struct csr_jail jail; /* its init (pid 1 inside), which is not our child: pidfd always */
  pid_t payload;        /* the interpreter (pid 2 inside), as this process sees it */
  int go;               /* where its code goes (csr_zygote_go) */
};

/* What can't come from a zygote: *WHY says why SPEC needs a one-shot jail
 * (--in, --out, --mount, --user, --net host, a sandbox's layer...), NULL
 * when a warm jail fits it. */
const char *csr_zygote_unfit (const struct jail_snippet *spec);

/* Ask Z for a warm jail for SPEC (its streams, extra fds 3 and 6, cgroup,
 * rlimits, sizes, environment, seccomp program) whose interpreter will run
 * the gate with ARGS as the snippet's sys.argv[1:]; returns when the jail
 * says READY (its interpreter confined and waiting for the code), or -1 (the
 * child is killed).  TEST_BREAK (NULL normally): a step the child is told to
 * skip, for the tests that prove csr_zygote_check refuses it. */
int csr_zygote_spawn (const struct csr_zygote *z, const struct jail_snippet *spec,
                      char *const *args, int n_args, const char *test_break, struct csr_warm *w,
                      csr_error **err);

/* zygote-check.c: check from outside that W's interpreter is confined as a
 * one-shot jail's payload is before it gets any code: seccomp in filter
 * mode (none when SPEC has no program), no_new_privs, no capability in any
 * set, namespaces of its own (none of them Z's or ours), and its init as
 * its parent.  -1 with *ERR naming what is wrong. */
int csr_zygote_check (const struct csr_zygote *z, const struct csr_warm *w,
                      const struct jail_snippet *spec, csr_error **err);

/* Send W's interpreter the first attempt: POLICY (the gate's, JSON) and
 * CODE; W->go is closed. */
int csr_zygote_go (struct csr_warm *w, const char *policy, const char *code, size_t code_len,
                   csr_error **err);

/* After W's init ended (its pidfd is readable): how the payload ended, from
 * the init's report; killed (SIGKILL) when there is none. */
int csr_warm_wait (struct csr_warm *w, struct csr_jail_exit *ex, csr_error **err);
/* Kill W (if alive) and close its descriptors. */
void csr_warm_release (struct csr_warm *w);

#endif
