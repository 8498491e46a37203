/* csrun — Python through the snippet pipeline in a sandbox (issue 15;
 * csrun-sandbox(1), RUN and SESSIONS), the caller's side.
 *
 * `csrun sandbox run` is csr_snippet_run with a launcher (supervisor/
 * launcher.h) that starts each attempt through the sandbox's keeper: as an
 * exec into the sandbox (its files, working directory, environment, limits
 * and confinement; the gate's verdict pipe as fd 3, the precompiled gate as
 * fd 4, the snippet as fd 5), or as a cell of one of its sessions (a
 * persistent interpreter: keeper-session.c, policies/session.py).  The gate,
 * the capture, the timeout, the scan, the diagnosis and the healing are the
 * pipeline's.  A snippet may also be a file of the sandbox: read through the
 * keeper, and its healed version written back (atomically, only when the
 * final attempt succeeded: keeper-run.c). */
#ifndef CSRUN_SANDBOX_RUN_H
#define CSRUN_SANDBOX_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "../supervisor/launcher.h"
#include "../util/error.h"
#include "sandbox.h"

/* Session names: 1 to 64 of [A-Za-z0-9_.-]. */
#define CSR_SBX_SESSION_NAME_MAX 64
bool csr_sbx_session_name_ok (const char *name);

/* A launcher into one sandbox: csr_snippet_request.launcher = &SL->l. */
struct csr_sbx_launcher
{
  struct csr_launcher l;
  int dirfd;              /* the sandbox's state directory (borrowed) */
  const char *session;    /* NULL: each attempt is an exec; else the session's name */
  const char *const *env; /* exec: KEY=VALUE added to the sandbox's environment (borrowed) */
  struct csr_limits_applied applied; /* the sandbox's limits, how enforced (spec.json) */
  /* What the attempts found, for the caller's report: */
  bool refused;         /* the keeper refused (a stopped sandbox, a busy session): see *ERR */
  bool session_started; /* a cell started the session's interpreter */
  bool session_lost;    /* the session died during a cell (killed after a timeout...) */
  long long cell;       /* the session's count of cells, after the last one */
};

/* A launcher for the sandbox in DIRFD whose spec is SPEC: SESSION NULL for
 * execs (ENV added to their environment), else cells of that session. */
void csr_sbx_launcher_init (struct csr_sbx_launcher *sl, int dirfd,
                            const struct csr_sandbox_spec *spec, const char *session,
                            const char *const *env);

/* The snippet that is the sandbox's file PATH (absolute, or relative to its
 * working directory; resolved inside the sandbox, never through /proc's
 * magic links): a regular file of at most MAX bytes (E2BIG), in *CODE
 * (malloc'ed, NUL-terminated), its absolute path in the sandbox in *REAL
 * (symbolic links resolved), the sha256 of its bytes in SHA256. */
int csr_sbx_read_snippet (int dirfd, const char *path, size_t max, char **code, size_t *len,
                          char **real, char sha256[65], csr_error **err);
/* Replace the sandbox's file REAL with CODE -- atomically (a new file in
 * its directory, synced, renamed over it; its mode and owner kept) and only
 * while it still has the digest OLD_SHA256 (else EBUSY: it changed since it
 * was read). */
int csr_sbx_write_back (int dirfd, const char *real, const char *old_sha256, const char *code,
                        size_t len, csr_error **err);

/* Sessions (csrun sandbox session ...): their list as the keeper's JSON
 * reply {"sessions":[{"name","pid","state","cells","created","idle_ms"}]};
 * rm (ENOENT: no such session). */
int csr_sbx_session_ls (int dirfd, char **reply, csr_error **err);
int csr_sbx_session_rm (int dirfd, const char *name, csr_error **err);
/* Save session NAME's picklable globals to OUT_FD (at most MAX bytes), or
 * load such a save from IN_FD into session NAME (started when it does not
 * run): *REPORT is the session's JSON report (see keeper_session_save in
 * session.h). */
int csr_sbx_session_save (int dirfd, const char *name, int out_fd, size_t max, char **report,
                          csr_error **err);
int csr_sbx_session_load (int dirfd, const char *name, int in_fd, size_t max, char **report,
                          csr_error **err);

#endif
