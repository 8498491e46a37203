/* csrun — sandboxes: long-lived jails (csrun-sandbox(1)).
 *
 * A sandbox is the snippet jail (jail/child.c) with a writable overlay root
 * (layer.h) and a holder for a payload, kept by a keeper process outside the
 * jail (keeper.c): the parent of the jail's init (which dies with it), the
 * owner of the control socket, the idle timer and the TTL, and the one that
 * enters the jail for exec (exec.c).  Its state directory (store.c) holds
 * spec.json, the keeper's lock (held while it lives), the control socket
 * ctl.sock, keeper.log, and the layer (upper/, ovl-work/).
 *
 * Later parts plug in here: files (cp/read/write/ls/find) and sessions are
 * more requests to the keeper; checkpoint packs upper/ + spec.json; ports are
 * forwarders the keeper owns. */
#ifndef CSRUN_SANDBOX_H
#define CSRUN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "../util/error.h"

#define CSR_SANDBOX_ID_LEN 32 /* hex digits */
#define CSR_SANDBOX_MAX_ENV 256
#define CSR_SANDBOX_MAX_PORTS 32

/* A --publish (host HOST:HOST_PORT to the sandbox's 127.0.0.1:PORT) or an
 * --upstream (the sandbox's 127.0.0.1:PORT to HOST:HOST_PORT); ports.h. */
struct csr_sandbox_port
{
  bool upstream;
  char host[256];     /* publish: the host address (numeric); upstream: an address or a name */
  uint16_t host_port; /* publish: the port bound (0 until the keeper binds it) */
  uint16_t host_port_asked; /* publish: what was asked (0: a free port) */
  uint16_t port;            /* in the sandbox, on 127.0.0.1 */
};

/* What `create` asked for, and what the keeper made of it (spec.json). */
struct csr_sandbox_spec
{
  char id[CSR_SANDBOX_ID_LEN + 1];
  char *name;            /* NULL: none */
  char *rootfs;          /* what was asked for (a tarball or a directory); NULL: the default */
  int64_t created;       /* unix seconds */
  uint64_t memory;       /* bytes; 0: none */
  uint64_t pids;         /* 0: none */
  uint64_t cpu_millis;   /* 0: none */
  char **env;            /* the whole environment of the sandbox (NULL-terminated) */
  char *workdir;         /* absolute; default /work */
  double idle_timeout_s; /* 0: never */
  double ttl_s;          /* 0: never */
  bool host_net;
  bool idle_checkpoint; /* --idle-action checkpoint: checkpointed before the idle removal */
  char **with; /* --with: Debian packages of a layer above the rootfs (NULL-terminated), or NULL */
  uint64_t disk; /* --disk: bytes the writable layer may hold (a tmpfs of its own); 0: no cap */
  /* Filled by the keeper once the jail runs. */
  int64_t keeper_pid;
  char *rootfs_dir;   /* the tree used as the lower layer */
  char *layer_dir;    /* --with: the package layer above it (rootfs/layer.h) */
  char *layer_digest; /* its digest */
  char *cgroup_v2;
  char *cgroup_v1[16];
  size_t n_cgroup_v1;
  char mechanism[32]; /* "cgroup-v2", "cgroup-v1", "rlimit", "none" */
  bool memory_enforced, pids_enforced, cpu_enforced;
  struct csr_sandbox_port ports[CSR_SANDBOX_MAX_PORTS]; /* ports.h */
  size_t n_ports;
};

void csr_sandbox_spec_release (struct csr_sandbox_spec *s);

/* ------------------------------------------------------------ store.c */

/* The directory of every sandbox of this user: $CSRUN_SANDBOX_DIR, else
 * $XDG_RUNTIME_DIR/csrun/sandboxes, else /run/csrun/sandboxes for root, else
 * $XDG_CACHE_HOME/csrun/sandboxes or $HOME/.cache/csrun/sandboxes; created
 * 0700 and trust-checked (util/trust.h; a mismatch is CSR_TRUST_REFUSED).
 * Returns a directory fd, *PATH its path. */
int csr_sandbox_root (char **path, csr_error **err);

/* The sandbox ID_OR_NAME (an id, a unique id prefix of at least 4 digits, or
 * a name) in ROOTFD: 0 with *ID set, -1 with ENOENT ("no such sandbox"). */
int csr_sandbox_find (int rootfd, const char *id_or_name, char id[CSR_SANDBOX_ID_LEN + 1],
                      csr_error **err);
/* Every sandbox directory's id (sorted), malloc'ed. */
int csr_sandbox_list (int rootfd, char ***ids, size_t *n, csr_error **err);
void csr_sandbox_list_free (char **ids, size_t n);

int csr_sandbox_spec_read (int dirfd, struct csr_sandbox_spec *s, csr_error **err);
int csr_sandbox_spec_write (int dirfd, const struct csr_sandbox_spec *s, csr_error **err);
/* The spec as JSON (for spec.json and `inspect`), malloc'ed. */
char *csr_sandbox_spec_json (const struct csr_sandbox_spec *s, bool pretty, csr_error **err);

/* Whether the keeper of the sandbox in DIRFD is alive (it holds keeper.lock):
 * 1 yes, 0 no. */
int csr_sandbox_keeper_alive (int dirfd);
/* Clean up the sandbox ID whose keeper is gone (or being told to stop by
 * the caller, who is the keeper): its cgroup (processes killed), then its
 * state directory.  A sandbox whose keeper lives is left alone (EBUSY)
 * unless FORCE. */
int csr_sandbox_reap (int rootfd, const char *id, bool force, csr_error **err);
/* A new random id. */
int csr_sandbox_new_id (char id[CSR_SANDBOX_ID_LEN + 1], csr_error **err);
/* DIGITS (even, at most 64) random hexadecimal digits and a NUL into OUT. */
int csr_sandbox_random_hex (char *out, size_t digits, csr_error **err);
/* A valid name: 1 to 64 letters, digits, '_', '.', '-'. */
bool csr_sandbox_name_ok (const char *name);

/* ------------------------------------------------------------ client.c */

/* Send the request REQ (one JSON object, no newline) to the keeper of the
 * sandbox in DIRFD, with the descriptors FDS (SCM_RIGHTS); returns the
 * connected socket (the reply is one JSON line on it). */
int csr_sandbox_connect (int dirfd, const char *req, const int *fds, size_t n_fds, csr_error **err);
/* Read one reply line from SOCK (at most 64 KiB), waiting at most TIMEOUT_MS
 * (< 0: forever). */
int csr_sandbox_read_reply (int sock, int timeout_ms, char **line, csr_error **err);
/* The same, keeping at most MAX_FDS descriptors that came with it in FDS
 * (*N_FDS of them; closed again on an error; the rest closed). */
int csr_sandbox_read_reply_fds (int sock, int timeout_ms, char **line, int *fds, size_t max_fds,
                                size_t *n_fds, csr_error **err);
/* Both: 0 and the reply parsed into *REPLY (NULL when it is not JSON; free
 * it with yajl_tree_free), or -1 with *ERR when it could not be sent or
 * read. */
int csr_sandbox_request (int dirfd, const char *req, const int *fds, size_t n_fds, int timeout_ms,
                         yajl_val *reply, csr_error **err);
/* Both, for a simple request; the reply's "error" member becomes *ERR. */
int csr_sandbox_call (int dirfd, const char *req, int timeout_ms, char **reply, csr_error **err);
/* The same, the reply parsed (free it with yajl_tree_free); NULL with *ERR. */
yajl_val csr_sandbox_call_json (int dirfd, const char *req, int timeout_ms, csr_error **err);

/* ------------------------------------------------------------ pkglayer.c */

struct csr_rootfs;
struct csr_layer;
/* The read-only trees of S: its rootfs (S->rootfs, else csrun run's
 * default) resolved through CACHE_DIR, and with S->with the package layer
 * above it (built when it is not cached), both holding their use locks
 * until freed.  Returns 0, CSR_LAYER_BAD_PACKAGE (-2: a package apt can't
 * get, or --with without a rootfs tarball) or -1. */
int csr_sandbox_trees (const struct csr_sandbox_spec *s, const char *cache_dir,
                       struct csr_rootfs **rootfs, struct csr_layer **layer, csr_error **err);

/* ------------------------------------------------------------ create.c */

/* Create the sandbox SPEC (its id is chosen here) under ROOTFD (path ROOT)
 * and start its keeper; returns once the jail is ready, or with an error and
 * nothing left behind (CSR_LAYER_BAD_PACKAGE: a --with package that can't
 * be had). */
int csr_sandbox_create (int rootfd, const char *root, struct csr_sandbox_spec *spec,
                        csr_error **err);

/* Reap every sandbox whose keeper is gone (each command does it first; `gc`
 * lists them): their ids in *REMOVED (may be NULL). */
int csr_sandbox_collect (int rootfd, char ***removed, size_t *n_removed, csr_error **err);

/* ------------------------------------------------------------ keeper.c */

struct csr_keeper_boot
{
  int rootfd;
  int dirfd;   /* the sandbox's state directory */
  int lockfd;  /* keeper.lock, locked */
  int readyfd; /* write "ok\n" or the error's text, then close */
  struct csr_sandbox_spec *spec;
};
/* The keeper's life (in the double-forked, setsid'd process): never returns. */
__attribute__ ((noreturn)) void csr_keeper_main (struct csr_keeper_boot *b);

#endif
