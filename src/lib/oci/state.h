/* csrun — the OCI runtime's state directory: one directory per container
 * under the state root, holding state.json (written atomically), the exec
 * FIFO that `start` opens, and a lock file serialising the commands that
 * change a container. */
#ifndef CSRUN_OCI_STATE_H
#define CSRUN_OCI_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

/* The state root: ROOT_OPT (--root) if not NULL, else $XDG_RUNTIME_DIR/csrun
 * when XDG_RUNTIME_DIR is set and not empty, else /run/csrun.  Created
 * (0700) when missing.  *OUT is malloc'ed. */
int oci_state_root (const char *root_opt, char **out, csr_error **err);

/* A container id: 1-1024 bytes of [A-Za-z0-9_+.-], not "." or ".."; else -1
 * with "invalid container id 'X'". */
int oci_id_check (const char *id, csr_error **err);

enum oci_status
{
  OCI_CREATING,
  OCI_CREATED,
  OCI_RUNNING,
  OCI_PAUSED,
  OCI_STOPPED,
};
const char *oci_status_name (enum oci_status s); /* creating created running paused stopped */

struct oci_state
{
  char *id;
  char *bundle;        /* absolute */
  char *rootfs;        /* absolute */
  pid_t pid;           /* host pid of the container's process; 0 before it exists */
  uint64_t pid_start;  /* its start time (field 22 of /proc/PID/stat): a reused pid is not ours */
  char *created;       /* RFC 3339 UTC with nanoseconds, e.g. 2026-11-29T21:30:00.123456789Z */
  uid_t owner;         /* the uid that created it */
  bool started;        /* `start` has opened the exec FIFO */
  bool paused;         /* frozen by `pause` */
  bool creating;       /* not saved: `create` is still setting it up (its hooks run) */
  bool force_running;  /* not saved: oci_state_json says "running" (for the poststart hooks,
                          which see it so even when the process already exited: crun) */
  char *cgroup_v2;     /* the container's cgroup v2 directory, or NULL */
  char *cgroup_v1[17]; /* its v1 directories (one per hierarchy), NULL-terminated */
  size_t n_cgroup_v1;
  char **annotation_keys, **annotation_values;
  size_t n_annotations;
  bool systemd_cgroup; /* created with --systemd-cgroup (recorded, reported) */
  char *config_path;   /* the config.json it was created from */
};

/* The status now: creating until pid is known, or while CREATING is set; stopped when the process
 * is gone or PID was reused (start time differs) or is a zombie; paused when frozen; running after
 * start; created before. */
enum oci_status oci_state_status (const struct oci_state *s);

/* Directory of container ID under ROOT: ROOT/ID (no check that it exists). */
char *oci_state_dir (const char *root, const char *id);

/* Create ROOT/ID exclusively (mode 0700): -1 with EEXIST and
 * "container 'ID' already exists" when taken. */
int oci_state_create_dir (const char *root, const char *id, csr_error **err);
/* Write S as ROOT/ID/state.json (temp file + fsync + rename). */
int oci_state_save (const char *root, const struct oci_state *s, csr_error **err);
/* Read ROOT/ID/state.json.  A missing container (no directory, or no
 * state.json in it yet) is -1 with ENOENT and the message "container 'ID'
 * does not exist" (podman maps it); a malformed file is -1 with EINVAL naming
 * the file.  *S is overwritten (not released) and zeroed on failure. */
int oci_state_load (const char *root, const char *id, struct oci_state *s, csr_error **err);
/* Remove ROOT/ID and everything in it (0 when it is already gone). */
int oci_state_remove (const char *root, const char *id, csr_error **err);
void oci_state_release (struct oci_state *s);

/* Take ROOT/ID/lock (flock, exclusive, blocking); returns the fd (close to
 * release) or -1. */
int oci_state_lock (const char *root, const char *id, csr_error **err);

/* The ids under ROOT (sorted), for `list`.  *IDS is a NULL-terminated malloc'ed array. */
int oci_state_list (const char *root, char ***ids, size_t *n, csr_error **err);

/* The runtime-spec state document of S, in runc's order:
 * {"ociVersion":"1.2.0","id","pid","status","bundle","rootfs","created",
 *  "annotations" (only when there are some),"owner" (user name or "")}.
 * pid is 0 when stopped or creating, as runc prints it.
 * Malloc'ed, pretty-printed (2 spaces, as runc), ending in a newline; NULL
 * only when out of memory. */
char *oci_state_json (const struct oci_state *s);
/* The same on one line, without the newline (list --format json). */
char *oci_state_json_compact (const struct oci_state *s);

/* Start time of PID from /proc/PID/stat (field 22), or 0 when it has no
 * such process. ZOMBIE (may be NULL) says whether it is a zombie. */
uint64_t oci_pid_start_time (pid_t pid, bool *zombie);

/* A signal given as a number ("9"), a name ("KILL", "SIGKILL", "kill") or
 * "SIGRTMIN+3": -1 with "unknown signal 'X'" otherwise. */
int oci_parse_signal (const char *s, int *sig, csr_error **err);

/* RFC 3339 UTC time with nanoseconds for now. Malloc'ed. */
char *oci_now_rfc3339 (void);

#endif
