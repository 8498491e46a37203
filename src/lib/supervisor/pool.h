/* csrun — the warm pool (issue 17): a launcher (launcher.h) whose attempts
 * run in jails forked by zygotes (jail/zygote.h), so that an attempt pays
 * neither an interpreter's start nor the launcher's processes.  Everything
 * an attempt reports stays its own: its cgroup (limits, OOM, cpu time, peak
 * memory), its namespaces, its timeout.  An attempt a warm jail does not fit
 * (--in, --out, --mount, --user, --net host: csr_zygote_unfit), or whose
 * warm jail could not be started or failed the confinement check, runs in
 * a one-shot jail instead (csr_launcher_jail), the latter with a warning and
 * "warm_refused" in its attempt.
 *
 * For front ends that run many snippets from one process (csrun batch,
 * csrun mcp): start the pool once after csr_snippet_preload, set
 * csr_snippet_request.launcher to csr_pool_launcher in every run, stop it
 * at the end.  The pool is shared by the processes forked after it starts
 * (each run may be a forked worker); only the starter stops it. */
#ifndef CSRUN_POOL_H
#define CSRUN_POOL_H

#include "../util/error.h"
#include "launcher.h"
#include "snippet.h"

struct csr_pool;

#define CSR_POOL_MAX_ZYGOTES 64

/* Start N zygotes (1..CSR_POOL_MAX_ZYGOTES) from PRE's jail (its rootfs,
 * layer, environment, seccomp program, gate), and check one warm jail of
 * each from start to confinement.  -1 with *ERR when this host or rootfs
 * can't have warm jails (then run without the pool). */
int csr_pool_start (const struct csr_snippet_result *pre, unsigned n, struct csr_pool **out,
                    csr_error **err);
/* The launcher of P's attempts. */
const struct csr_launcher *csr_pool_launcher (struct csr_pool *p);
/* In a forked worker: ask zygote SLOT (modulo their number) for its jails. */
void csr_pool_use_slot (struct csr_pool *p, unsigned slot);
/* In a forked worker (csrun batch, issue 17): before the first code of
 * this process's run goes to a jail (warm or one-shot), read one byte from
 * FD, the batch's go-ahead: so a worker can make its warm jail while
 * --jobs others run their snippets, and its own runs only when one of them
 * has ended.  End of file instead of the byte: the batch stopped (--fail-
 * fast, a signal) before this item ran; the start fails with ECANCELED.
 * The wait is not part of the attempt's time or timeout
 * (csr_launched.waited_ms).  FD is closed once read; -1: none. */
void csr_pool_set_run_gate (int fd);
/* Stop the zygotes (no attempt may be running); safe on NULL. */
void csr_pool_stop (struct csr_pool *p);

#endif
