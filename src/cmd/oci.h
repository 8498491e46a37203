/* csrun — the OCI runtime front end (create, start, state, kill, delete,
 * exec, run, ...): the runc/crun command-line contract. */
#ifndef CSRUN_CMD_OCI_H
#define CSRUN_CMD_OCI_H

#include <stdbool.h>
#include <stdio.h>

#include "cmd.h"
#include "oci/oci-config.h"
#include "oci/state.h"
#include "util/error.h"

/* Report a failure the way runc and crun do: "csrun: MESSAGE" on stderr and,
 * with --log, a line in the log file ({"msg","level","time"} with
 * --log-format json).  Returns 1 (the exit status of a failed command). */
int oci_fail (const struct csr_global *g, csr_error *e);
/* The exit statuses of the OCI commands: 1 for an error (oci_fail), 255
 * for exec's runtime failures (runc's, as distinct from the 0-254 of the
 * process that ran).  oci_fail_status reports E as oci_fail does and
 * returns STATUS: the one helper for both. */
#define OCI_EXIT_ERROR 1
#define OCI_EXIT_RUNTIME 255
int oci_fail_status (const struct csr_global *g, int status, csr_error *e);
int oci_failf (const struct csr_global *g, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* With --log: create the file now, and send the library's messages (--debug)
 * there instead of stderr.  0, or 1 after reporting a failure. */
int oci_log_init (const struct csr_global *g);
/* A warning in the same places (level "warning"). */
void oci_warn (const struct csr_global *g, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* A connected AF_UNIX stream socket to PATH (--console-socket), or -1. */
int oci_connect_console (const char *path, csr_error **err);

/* The state root for G (--root, XDG_RUNTIME_DIR, /run/csrun); NULL after
 * reporting a failure. */
char *oci_root (const struct csr_global *g);

/* Whether `csrun run ARGS` means the OCI run (a bundle) rather than a snippet:
 * an OCI global flag was used (--root, --log...), an option only the OCI run
 * has comes before the first operand (-b/--bundle, -d/--detach, --pid-file,
 * --console-socket, --keep, --no-pivot, --preserve-fds, --no-new-keyring,
 * --no-subreaper), or there is no operand at all while ./config.json exists.  `csrun run x.py`
 * is a snippet run even next to a config.json (a missing x.py is the
 * snippet's usual "cannot read" error, not an OCI one). */
bool oci_run_is_bundle (const struct csr_global *g, int argc, char **argv);

/* Help in runc's layout (see oci-help.c).  oci_prog_name is the name csrun
 * was started as; oci_help prints COMMAND's help (-1: no such topic). */
const char *oci_prog_name (void);
bool oci_help_exists (const char *cmd);
int oci_help (const char *cmd, FILE *out);
void oci_help_global (FILE *out);
/* checkpoint, restore: their help, else "not supported" (exit 1). */
int cmd_oci_unsupported (struct csr_global *g, int argc, char **argv);

int cmd_oci_create (struct csr_global *g, int argc, char **argv);
int cmd_oci_run (struct csr_global *g, int argc, char **argv);
int cmd_oci_start (struct csr_global *g, int argc, char **argv);
/* `run` with a terminal it proxies itself: start then forwards the
 * container's READY=1 (NOTIFY_SOCKET) from a helper process instead of
 * waiting for it, so that the terminal is copied meanwhile. */
extern bool oci_start_notify_in_background;
int cmd_oci_state (struct csr_global *g, int argc, char **argv);
int cmd_oci_kill (struct csr_global *g, int argc, char **argv);
int cmd_oci_delete (struct csr_global *g, int argc, char **argv);
int cmd_oci_list (struct csr_global *g, int argc, char **argv);
int cmd_oci_ps (struct csr_global *g, int argc, char **argv);
int cmd_oci_spec (struct csr_global *g, int argc, char **argv);
int cmd_oci_features (struct csr_global *g, int argc, char **argv);
int cmd_oci_pause (struct csr_global *g, int argc, char **argv);
int cmd_oci_resume (struct csr_global *g, int argc, char **argv);
int cmd_oci_exec (struct csr_global *g, int argc, char **argv);
int cmd_oci_update (struct csr_global *g, int argc, char **argv);
int cmd_oci_events (struct csr_global *g, int argc, char **argv);

#endif
