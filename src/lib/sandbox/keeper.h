/* csrun — the inside of a sandbox's keeper (keeper.c), for the files that
 * add requests to it (exec, files, sessions, checkpoints, ports): the
 * keeper's state, its reply helpers, the table of requests, descriptors
 * watched by its poll loop, and the hooks run when the jail starts or
 * stops. */
#ifndef CSRUN_SANDBOX_KEEPER_H
#define CSRUN_SANDBOX_KEEPER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "../cgroup/cgroup.h"
#include "../jail/jail.h"
#include "../jail/spec.h"
#include "exec.h"
#include "layer.h"
#include "sandbox.h"

#define KEEPER_MAX_EXECS 64
#define KEEPER_MAX_WATCHES 256
#define KEEPER_MAX_REQUEST (256 * 1024) /* bytes of one request line */

struct keeper;

struct keeper_exec
{
  bool used;
  struct csr_sbx_exec x;
  int client;                  /* the caller that gets the reply at the end, or -1 (ON_END's) */
  uint64_t t0_ms, deadline_ms; /* deadline 0: none */
  long long timeout_ms;        /* what was asked (0: none) */
  /* Instead of a reply to CLIENT (a detached exec, keeper-detach.c): called
   * at the end, before the slot is freed. */
  void (*on_end) (struct keeper *k, struct keeper_exec *e);
  void *arg;
};

/* A descriptor the poll loop watches for a part of the keeper: FN runs when
 * it is ready (REVENTS), and may remove the watch (keeper_unwatch). */
typedef void (*keeper_watch_fn) (struct keeper *k, int fd, short revents, void *arg);
struct keeper_watch
{
  bool used;
  int fd;
  short events;
  keeper_watch_fn fn;
  void *arg;
};

struct keeper
{
  struct csr_keeper_boot *b;
  struct csr_sandbox_spec *spec;
  struct csr_rootfs *rootfs;
  struct csr_layer *layer; /* --with (pkglayer.c), or NULL */
  struct csr_seccomp *seccomp;
  struct csr_cgroup *cg;
  int cg_fds[CSR_CG_MAX_DIRS + 1];
  size_t n_cg_fds;
  bool cg_self;       /* cg_fds are v1 "tasks" files the helper writes "0" to */
  char *upper, *work; /* as the jail sees them (it opens them in its mount namespace) */
  char *upper_keeper; /* upper/ as the keeper reaches it (--disk: through the tmpfs's fd) */
  char *argv_hold[2];
  struct jail_snippet sn;
  struct csr_jail jail;
  bool running;
  int ns_fds[CSR_SANDBOX_N_NS]; /* the jail's namespaces, from its holder; -1: none */
  int listen_fd;
  uint64_t last_activity_ms, ttl_deadline_ms;
  struct keeper_exec execs[KEEPER_MAX_EXECS];
  size_t n_execs;
  /* Work in progress that keeps the sandbox busy (not idle): execs count
   * themselves; other parts add to it while they work. */
  size_t n_busy;
  /* Non-NULL while a part must not have the sandbox changed (what it is
   * doing, e.g. "a checkpoint"): requests that count as activity are
   * refused meanwhile, but rm (the parts' STOPPING and FINISH hooks then
   * end what they do). */
  const char *busy_with;
  bool idle_expired; /* the keeper is finishing because the sandbox was idle */
  /* Set by a part (at INIT) to take over a sandbox idle for its timeout
   * (k->idle_expired set), e.g. to checkpoint it while it still runs:
   * true, and it keeps the sandbox busy (n_busy) while it works, then calls
   * keeper_finish; false: it is removed now (FINISH hooks as usual). */
  bool (*on_idle) (struct keeper *k);
  struct keeper_watch watches[KEEPER_MAX_WATCHES];
  /* --disk (disk.c): the namespaces that hold its tmpfs and the tmpfs's
   * root (O_PATH), -1 without; the join paths the jail gets. */
  int disk_fds[3];
  char disk_userns[32], disk_mntns[32];
};

/* The target of a join (exec.h) for the running jail of K. */
void keeper_target (const struct keeper *k, struct csr_sbx_target *t);

/* Replies: one JSON line on FD. */
void keeper_reply (int fd, const char *json);
void keeper_reply_error (int fd, const char *msg);
struct csr_jgen;
/* The document W builds (its generator is freed), or an error. */
void keeper_reply_gen (int fd, struct csr_jgen *w);
void keeper_reply_errorf (int fd, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* A request: REQ is the parsed line, FDS the descriptors that came with it
 * (closed by the caller after the handler returns, unless the handler set
 * them to -1 to keep them).  Set *KEEP to keep the connection FD open (the
 * handler then owns it and closes it later). */
typedef void (*keeper_op_fn) (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds,
                              bool *keep);
struct keeper_op
{
  const char *name;
  keeper_op_fn fn;
  bool activity; /* counts as activity for the idle timer */
};

/* A part of the keeper (keeper-parts.c lists them): its requests, and what
 * it does when the keeper has set up (INIT, before the sandbox is reported
 * ready: an error fails the create), when the jail has started (STARTED:
 * after the create and after each start), before the jail is killed
 * (STOPPING: stop, rm, idle timeout, TTL), and before the sandbox is removed
 * (FINISH).  Every member may be NULL. */
struct keeper_part
{
  const char *name;
  const struct keeper_op *ops; /* ends with a NULL name */
  int (*init) (struct keeper *k, csr_error **err);
  void (*started) (struct keeper *k);
  void (*stopping) (struct keeper *k);
  void (*finish) (struct keeper *k);
};
extern const struct keeper_part *const keeper_parts[];  /* NULL-terminated */
extern const struct keeper_part keeper_part_core;       /* keeper.c: info, stop, start, rm, exec */
extern const struct keeper_part keeper_part_checkpoint; /* keeper-checkpoint.c */

/* Stop the jail (as the stop request: the parts' STOPPING hooks, execs
 * killed, the jail killed and reaped); nothing when it is not running. */
void keeper_stop (struct keeper *k);
/* Start it again (as the start request: then the parts' STARTED hooks). */
int keeper_start (struct keeper *k, csr_error **err);
/* Remove the sandbox and end the keeper (as rm); WHY goes to keeper.log. */
__attribute__ ((noreturn)) void keeper_finish (struct keeper *k, const char *why);

/* Watch FD (EVENTS) in the poll loop; 0, or -1 when the table is full. */
int keeper_watch (struct keeper *k, int fd, short events, keeper_watch_fn fn, void *arg);
/* Stop watching FD (not closed here). */
void keeper_unwatch (struct keeper *k, int fd);

/* Strings of a JSON array (NULL-terminated, malloc'ed), NULL on a bad one. */
char **keeper_strv (yajl_val a);
void keeper_strv_free (char **v);

/* The exec request (exec.c's side of the keeper, keeper-exec.c). */
void keeper_op_exec (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep);
/* Start the exec REQ asks for ({"argv", "env", "cwd", "uid", "gid",
 * "timeout_ms", "tty", "fds"}) with the standard streams FDS[0..2] and one
 * more for each of "fds" (N_FDS in all; the helper gets copies) in a free
 * slot, whose CLIENT is -1 and ON_END NULL; NULL with *ERR (a reply's
 * text). */
struct keeper_exec *keeper_exec_start (struct keeper *k, yajl_val req, const int *fds, size_t n_fds,
                                       csr_error **err);
/* The end of E, into an open JSON map: exit_code, signal, timed_out,
 * exec_failed, setup_failed, duration_ms, pid, cpu_ms and maxrss_kib (when
 * known), timeout_ms. */
void keeper_exec_gen_result (struct csr_jgen *w, const struct keeper_exec *e);
/* Before the jail is killed (stop, rm, idle, TTL): every running exec. */
void keeper_execs_kill (struct keeper *k);
/* Before the keeper ends: close what the execs hold, reap their helpers. */
void keeper_execs_release (struct keeper *k);
/* An exec's status pipe is readable. */
void keeper_exec_ready (struct keeper *k, struct keeper_exec *e);

/* --disk (disk.c): make the capped tmpfs (mounted on MOUNTPOINT in the
 * namespaces it makes) and make the jail join them; its root (O_PATH), or
 * -1. */
int keeper_disk_make (struct keeper *k, const char *mountpoint, csr_error **err);
int keeper_disk_root (const struct keeper *k);
extern const struct keeper_part keeper_part_disk;

/* Detached execs (keeper-detach.c): exec with "detach", and the part with
 * their "wait" and "execs" requests. */
void keeper_detach_exec (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds);
extern const struct keeper_part keeper_part_detach;

#endif
