/* csrun — what cgroup.c shares with its two backends (cgroup-v2.c,
 * cgroup-v1.c): the object, the backend vtable, small file helpers, and the
 * parsers the unit tests feed with strings.  Not part of the library's
 * interface: only the cgroup files and tests/unit/test-cgroup.c include it. */
#ifndef CSRUN_CGROUP_INTERNAL_H
#define CSRUN_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

/* csrun's own directories: <cgroup2 parent>/csrun.slice/ and <v1 mount>/csrun/. */
#define CSR_CG_V2_DIR "csrun.slice"
#define CSR_CG_V1_DIR "csrun"
/* Longest "csrun-<pid>-<n>" plus NUL. */
#define CSR_CG_NAME_MAX 48

struct csr_cgroup;

/* The small interface between the common part and a backend. */
struct csr_cgroup_backend
{
  enum csr_cgroup_mechanism mechanism;
  int (*enter) (struct csr_cgroup *cg, pid_t pid, csr_error **err);
  int (*stats) (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err);
  /* Kill, wait until empty, rmdir, close: the object is freed by the caller. */
  void (*destroy) (struct csr_cgroup *cg);
};

/* One directory of the jail's cgroup: the v2 leaf, or one per v1 hierarchy
 * (co-mounted controllers, e.g. cpu,cpuacct, share one). */
struct csr_cg_dir
{
  char *parent;  /* csrun's directory: .../csrun.slice or <mount>/csrun */
  int parent_fd; /* ... opened (O_DIRECTORY | O_NOFOLLOW), -1 if none */
  int fd;        /* the cgroup directory itself (O_DIRECTORY), -1 if none */
  unsigned mask; /* v1: 1 << CSR_CG_V1_* of the controllers in this hierarchy */
};

/* One handle for both placement policies.  An ephemeral (snippet) cgroup
 * has BE and its fd-held DIRS; a container's (BE NULL) has the paths V2 and
 * V1 (the state records them) and, for CLONE_INTO_CGROUP, V2_FD. */
struct csr_cgroup
{
  const struct csr_cgroup_backend *be;
  char name[CSR_CG_NAME_MAX]; /* csrun-<pid>-<n> */
  struct csr_cg_dir dirs[CSR_CG_V1_N];
  size_t n_dirs;
  bool swap_limited;

  /* The container's v2 directory, or NULL.  With v1 directories too (a
   * hybrid host) it is the container's place in the controller-less
   * unified hierarchy (as runc and crun put it there): joined, listed and
   * removed, but the limits and the freezer are the v1 ones. */
  char *v2;
  char *v1[CSR_CG_MAX_DIRS]; /* one per v1 hierarchy it was made in */
  size_t n_v1;
  int v2_fd; /* V2 opened (O_PATH | O_DIRECTORY), or -1; valid when HAS_V2_FD */
  bool has_v2_fd;
};

/* Backends.  Return 1 with *OUT set when the cgroup was created, 0 when this
 * backend can't be used here (why goes to csr_debug), -1 on an unexpected
 * error after it was chosen (nothing is left behind). */
int csr_cg_v2_create (const char *v2_parent, const struct csr_cgroup_limits *limits,
                      struct csr_cgroup **out, struct csr_cgroup_enforced *enforced,
                      csr_error **err);
int csr_cg_v1_create (const char *const v1[CSR_CG_V1_N], const struct csr_cgroup_limits *limits,
                      struct csr_cgroup **out, struct csr_cgroup_enforced *enforced,
                      csr_error **err);

/* Write LIMITS into the new cgroup CG through the resources writer; what
 * is in force goes to *ENF and CG->swap_limited. */
int csr_cg_write_limits (struct csr_cgroup *cg, const struct csr_cgroup_limits *limits,
                         struct csr_cgroup_enforced *enf, csr_error **err);

/* After the run: the v2 or v1 statistics of an ephemeral cgroup (stats.c). */
int csr_cg_v2_stats (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err);
int csr_cg_v1_stats (struct csr_cgroup *cg, struct csr_cgroup_stats *st, csr_error **err);

/* ---- helpers shared by the backends ---- */

/* A new zeroed object (all fds -1) with a fresh name; NULL + err on ENOMEM. */
struct csr_cgroup *csr_cg_new (const struct csr_cgroup_backend *be, csr_error **err);
/* Close the fds and free. */
void csr_cg_free (struct csr_cgroup *cg);
/* Write VAL to DFD/FILE (open O_WRONLY|O_TRUNC, one write, close).  0 or -errno. */
int csr_cg_write (int dfd, const char *file, const char *val);
int csr_cg_write_u64 (int dfd, const char *file, uint64_t val);
/* Read DFD/FILE into BUF (NUL-terminated, at most SIZE - 1 bytes): the length or -errno. */
ssize_t csr_cg_read (int dfd, const char *file, char *buf, size_t size);
/* mkdir DFD/NAME (mode 0755; the kernel fills it with its files) unless
 * EXIST_OK and it exists, then open it (O_DIRECTORY | O_NOFOLLOW).  The fd or -errno. */
int csr_cg_mkdir_open (int dfd, const char *name, bool exist_ok);
/* Open a directory path (O_DIRECTORY | O_NOFOLLOW on the last component): fd or -errno. */
int csr_cg_open_dir (const char *path);
/* Give CG the next name (csrun-<our pid>-<counter>), after an EEXIST. */
void csr_cg_rename (struct csr_cgroup *cg);
/* rmdir PARENT_FD/NAME (the cgroup at FD); while the kernel says it is busy,
 * kill what is in it (and below it) and wait, bounded (2 s), until it is
 * empty.  V2 uses cgroup.kill and cgroup.events when present.  0, or -errno
 * of the last failure (the directory is then left for
 * csr_cgroup_cleanup_stale).  An empty cgroup costs one rmdir. */
int csr_cg_remove (int fd, int parent_fd, const char *name, bool v2);
/* Remove D's cgroup NAME (warning when it can't be) and close D's fds. */
int csr_cg_dir_remove (struct csr_cg_dir *d, const char *name, bool v2);

/* ---- parsers (pure: the tests feed them strings) ---- */

/* "csrun-<pid>-<n>" → true with *PID, *N; anything else (other names, "csrun-0-1",
 * leading zeros, trailing text) → false. */
bool csr_cg_name_parse (const char *name, pid_t *pid, unsigned long *n);
int csr_cg_name_format (char *buf, size_t size, pid_t pid, unsigned long n);
/* Is WORD one of the space/newline-separated words of LIST ("memory pids cpu")? */
bool csr_cg_word_in (const char *list, const char *word);
/* The value of a "KEY N" line of TEXT (memory.events, cpu.stat, memory.oom_control). */
bool csr_cg_key_u64 (const char *text, const char *key, uint64_t *val);
/* The cgroup2 path ("0::/a/b" line) of a /proc/<pid>/cgroup text: a pointer
 * into TEXT and its length, or false. */
bool csr_cg_parse_proc_cgroup (const char *text, const char **path, size_t *len);

/* What /proc/self/mountinfo says about the cgroup file systems. */
struct csr_cg_mounts
{
  char *v2;              /* cgroup2 mount point */
  char *v2_root;         /* its root inside the hierarchy (field 4), usually "/" */
  char *v1[CSR_CG_V1_N]; /* v1 mount points of memory, pids, cpu, cpuacct */
};
/* Parse a whole mountinfo text; the first mount of each kind wins.  Octal
 * escapes (\040) in mount points are decoded. */
int csr_cg_parse_mountinfo (const char *text, struct csr_cg_mounts *m, csr_error **err);
void csr_cg_mounts_clear (struct csr_cg_mounts *m);
/* From the mounts, the caller's cgroup2 path (from /proc/self/cgroup) and
 * whether it is root, the directory that gets csrun.slice/: root → the cgroup2
 * mount; otherwise the parent of the caller's own cgroup (NULL when that is
 * the root or outside the mount).  Malloc'ed, or NULL. */
char *csr_cg_v2_parent (const struct csr_cg_mounts *m, const char *own, size_t own_len,
                        bool is_root);

/* ---- test seams ---- */

/* The kernel populates a new cgroup directory with its files and removes them
 * at rmdir; a fake tree under /tmp needs the test to do it. */
struct csr_cgroup_test_hooks
{
  int (*mkdirat) (int dfd, const char *name, mode_t mode); /* 0 or -1 + errno */
  int (*rmdirat) (int dfd, const char *name);              /* 0 or -1 + errno */
};
/* NULL restores the real calls. */
void csr_cgroup_set_test_hooks (const struct csr_cgroup_test_hooks *hooks);
int csr_cg_mkdirat (int dfd, const char *name, mode_t mode);
int csr_cg_rmdirat (int dfd, const char *name);

/* ---- containers (container.c, resources.c, stats.c, freezer.c) ---- */

/* One v1 hierarchy, or all the cgroup hierarchies of the host (hierarchy.c). */
struct csr_cg_hier
{
  char *mnt;
  char *dev; /* "major:minor": one hierarchy */
  bool root; /* the mount shows the hierarchy's root */
};

struct csr_cg_hiers
{
  char *v2;
  bool v2_root;
  struct csr_cg_hier v1[CSR_CG_MAX_DIRS];
  size_t n_v1;
};

int csr_cg_hiers_read (struct csr_cg_hiers *h, csr_error **err);
void csr_cg_hiers_add_v1 (struct csr_cg_hiers *h, const char *mnt, const char *dev, bool root);
void csr_cg_hiers_free (struct csr_cg_hiers *h);

/* A growing set of pids (remove.c). */
struct pidset
{
  pid_t *v;
  size_t n, cap;
};
/* The pids in the cgroups DIRS[0..N) (and below), sorted, unique. */
int csr_cg_collect_all (const char *const *dirs, size_t n, struct pidset *s, csr_error **err);
/* The directories of CG: its v1 ones, and its v2 one. */
size_t csr_cg_dirs_of (const struct csr_cgroup *cg, const char **dirs);
/* EBUSY when DIR (v2 or v1) is frozen: csrun does not thaw what it did not freeze. */
int csr_cg_check_not_frozen (const char *dir, bool v2, csr_error **err);
/* Monotonic milliseconds; sleep; strip trailing blanks (cgroupfs.c). */
void csr_cg_sleep_ms (long ms);
void csr_cg_rtrim (char *s);

/* csr_cgroup_container_create into a caller's zeroed CG (the unit tests
 * use it on a stack object); csr_cg_container_release frees what it holds. */
int csr_cg_container_make (const char *path, const struct csr_cgroup_resources *r,
                           const char *roots_v2, const char *const *roots_v1, struct csr_cgroup *cg,
                           struct csr_cgroup_applied *applied, csr_error **err);
void csr_cg_container_release (struct csr_cgroup *cg);
/* Move PID into every directory of the container cgroup CG (cgroup.procs). */
int csr_cg_container_enter (const struct csr_cgroup *cg, pid_t pid, csr_error **err);

/* Write VAL to DIR/FILE in one write(2).  0 written, 1 when the file does
 * not exist (controller not there), -1 on an error. */
int csr_cg_path_write (const char *dir, const char *file, const char *val, csr_error **err);
/* Read DIR/FILE into *OUT (malloc'ed).  0 read, 1 when it does not exist, -1 error. */
int csr_cg_path_read (const char *dir, const char *file, char **out, csr_error **err);
bool csr_cg_path_exists (const char *dir, const char *file);

/* Checks that need no cgroup (made before anything is created). */
int csr_cg_resources_check (const struct csr_cgroup_resources *r, bool update, csr_error **err);
/* Write R into the directories of CG (a v2 leaf; or v1 leaves, with or
 * without a hybrid unified one).  UPDATE: a running container's cgroup
 * (only the given fields; a cpu quota alone keeps the period). */
int csr_cg_resources_apply (const struct csr_cgroup *cg, const struct csr_cgroup_resources *r,
                            bool update, struct csr_cgroup_applied *a, csr_error **err);

#endif
