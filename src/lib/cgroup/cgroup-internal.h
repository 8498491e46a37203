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

struct csr_cgroup
{
  const struct csr_cgroup_backend *be;
  char name[CSR_CG_NAME_MAX]; /* csrun-<pid>-<n> */
  struct csr_cg_dir dirs[CSR_CG_V1_N];
  size_t n_dirs;
  bool swap_limited;
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

/* ---- helpers shared by the backends (cgroup.c) ---- */

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

#endif
