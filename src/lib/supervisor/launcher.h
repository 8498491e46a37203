/* csrun — how one attempt of the snippet pipeline is started, watched,
 * killed and reaped: the one step the front ends that run Python do not
 * share.  `csrun run`, `check`, `hook` and `batch` use the default, a
 * one-shot jail (csr_launcher_jail: jail.h); a sandbox (issue 15) runs each
 * attempt as an exec into it, or as a cell of one of its sessions
 * (sandbox/run.h).  Everything else -- the gate, the capture of the output,
 * the timeout, the scan, the diagnosis, the healing -- is the pipeline's,
 * whatever the launcher. */
#ifndef CSRUN_LAUNCHER_H
#define CSRUN_LAUNCHER_H

#include <stdbool.h>
#include <stddef.h>

#include "../jail/jail.h"
#include "../jail/spec.h"
#include "../util/error.h"
#include "limits.h"

/* One attempt as the loop asks for it.  SPEC is the one-shot jail's whole
 * description: its argv is `python3 -I -S -u -c BOOT GATE POLICY ARGS...`,
 * its only file the snippet (snippet.py), its streams and extra fds the
 * capture's (extra_fds[i] becomes fd 3 + i: the verdict pipe, the
 * precompiled gate or -1, -1, the next attempt's socket; see the layout
 * below).  The same in pieces, for launchers that do not run that command
 * line. */
struct csr_launch_req
{
  const struct jail_snippet *spec;
  const char *code; /* the snippet */
  size_t code_len;
  const char *policy_json; /* the gate's policy (csr_gate_policy_to_json_ex) */
  char *const *args;       /* the snippet's sys.argv[1:] */
  int n_args;
};

/* A started attempt. */
struct csr_launched
{
  int exit_fd;          /* readable once the payload ended; -1: ask LAUNCHER->ended */
  struct csr_jail jail; /* the one-shot jail */
  int sock;             /* a sandbox's: the connection to its keeper */
  void *priv;
  /* issue 17, the warm pool (pool.h): the attempt runs in a warm jail; or
   * one was refused (why), and it runs in a one-shot jail. */
  bool warm;
  char warm_refused[200];
  /* How long start waited before it sent any code (pool.h's run lock): not
   * the attempt's time. */
  uint64_t waited_ms;
};

struct csr_launcher
{
  const char *name; /* "jail", "sandbox", "session" */
  /* The attempt gets a jail of its own: csr_snippet_run prepares the rootfs,
   * the seccomp program and the precompiled gate, the capture makes a
   * cgroup per attempt (csr_limits_prepare).  False: the launcher's target
   * has them (a sandbox's limits are described by APPLIED). */
  bool one_shot;
  bool gate_code;        /* !one_shot: it takes the precompiled gate (fd 4) too */
  bool source_on_fd;     /* the snippet goes as fd 5, not ./snippet.py (the policy says so) */
  bool rerun_unrun_only; /* heal and run again only when the failed attempt did not
                          * run (blocked, a syntax error): a session's cell that ran
                          * changed state csrun can't undo */
  /* issue 17: it passes fd 6 (CSR_LAUNCH_FD_NEXT) on, so an attempt whose
   * code never ran (the gate stopped it) may wait there for the next
   * attempt's code instead of ending (capture.h, csr_capture_run_kept):
   * the one-shot jail and an exec into a sandbox; not a session's cell. */
  bool reuse_unrun;
  const struct csr_limits_applied *applied; /* !one_shot: copied to every attempt */

  int (*start) (const struct csr_launcher *l, const struct csr_launch_req *r,
                struct csr_launched *p, csr_error **err);
  bool (*ended) (struct csr_launched *p); /* without blocking (only when exit_fd is -1) */
  /* Stop the payload so that its end is still reported (as
   * csr_jail_kill_payload): > 0 when done, 0 when KILL must be used. */
  int (*kill_payload) (struct csr_launched *p);
  void (*kill) (struct csr_launched *p); /* everything, now */
  /* After EXIT_FD is readable (or ENDED): how it ended. */
  int (*wait) (struct csr_launched *p, struct csr_jail_exit *ex, csr_error **err);
  void (*release) (struct csr_launched *p);
  void *data; /* the launcher's own */
};

/* The default: every attempt in a one-shot jail of its own (jail.h). */
extern const struct csr_launcher csr_launcher_jail;

/* The descriptors of an attempt, for every launcher (csrun-run(1),
 * DESCRIPTORS, says the same to users):
 *   0, 1, 2  stdin (a pipe fed from --stdin, or /dev/null), stdout, stderr
 *   3        the verdict pipe: the gate writes its JSON verdict line (and,
 *            when the attempt waits for the next one, "end STATUS CPU_NS
 *            HWM_KIB") and closes it before the snippet runs
 *   4        the precompiled gate, a sealed memfd (gatecode.h): read and
 *            closed by the bootstrap; absent when there is none
 *   5        the snippet, a sealed memfd, when the launcher has source_on_fd
 *            (an exec into a sandbox: nothing is written to its working
 *            directory; the policy's "source_fd" says 5); else the snippet
 *            is ./snippet.py and 5 is closed
 *   6        with reuse_unrun, when the attempt may wait for the next: a
 *            socket on which the gate receives the next attempt's policy and
 *            code; closed before the snippet runs
 * Nothing else is open; none of 3-6 is open when the snippet's code runs.
 * A session's cell gets 0-3 and the code by SCM_RIGHTS (session.py). */
enum
{
  CSR_LAUNCH_FD_VERDICT = 3,
  CSR_LAUNCH_FD_GATE = 4,
  CSR_LAUNCH_FD_SOURCE = 5,
  CSR_LAUNCH_FD_NEXT = 6,
};

#endif
