/* csrun — struct jail_spec: everything the jail engine needs to know about one
 * jailed process.  Every face (run, batch, OCI, sandbox) fills one of these,
 * inside its own part. */
#ifndef CSRUN_SPEC_H
#define CSRUN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct csr_cgroup;

struct csr_idmap
{
  uint32_t inside, outside, count;
};

#define CSR_MAX_IDMAPS 8

/* A host directory bound into the jail (--mount): SRC as the host sees it. */
struct csr_jail_bind
{
  const char *src;
  const char *dst; /* /work/..., /data[/...] or /mnt[/...] (checked by the caller) */
  bool rw;
};

struct csr_file
{
  const char *path; /* path inside the jail, relative to the working directory or absolute */
  const char *data;
  size_t len;
  mode_t mode;
};

/* What every face fills and the launcher reads (launch.h): the root, the
 * identity mapping, the filter and the cgroup.  The face's own part embeds
 * it as its first member: struct jail_snippet below (the snippet jail,
 * jail.h) or struct csr_oci_spec (an OCI container, oci-jail.h).  The
 * namespaces to make are the face's to say (its layout or its config);
 * the launcher gets them as clone flags. */
struct jail_spec
{
  /* Root filesystem: a directory (the snippet jail binds it read-only). */
  const char *rootfs_dir;
  /* A package layer above it (csrun run --with; rootfs/layer.h), or NULL. */
  const char *layer_dir;

  /* Identity: user-namespace maps; empty means "invoking user -> 0". */
  struct csr_idmap uid_map[CSR_MAX_IDMAPS];
  size_t n_uid_map;
  struct csr_idmap gid_map[CSR_MAX_IDMAPS];
  size_t n_gid_map;
  bool use_newidmap; /* write the maps through newuidmap/newgidmap (subordinate ranges) */

  const void *seccomp_bpf;   /* struct sock_fprog *, loaded last before exec; NULL = none */
  struct csr_cgroup *cgroup; /* the process starts (or is moved) here before it runs; NULL = none */
};

/* The snippet face (csr_jail_start): a program under csrun's init in the
 * fixed snippet layout (read-only root, tmpfs /tmp and working directory,
 * files written into it), with csrun's rlimit defaults and given fds. */
struct jail_snippet
{
  struct jail_spec jail; /* first */

  /* Process. */
  char *const *argv; /* argv[0] is an absolute path inside the jail */
  char *const *envp; /* the whole environment; nothing is inherited */
  const char *cwd;   /* default /work */
  const char *hostname;
  bool host_net; /* share the host's network namespace (--net host): no isolation */
  uid_t uid;     /* uid/gid the process runs as inside (0 by default) */
  gid_t gid;

  /* Layout. */
  bool rootfs_writable; /* reserved: the root is bound read-only */
  /* issue 15, sandboxes (src/lib/sandbox/): LAYER_UPPER/LAYER_WORK (host
   * paths) make the root a writable overlay over the rootfs whose upper
   * layer is kept; the working directory is then on that layer, not a
   * tmpfs.  HOLD: no program, the payload only holds the jail open (no
   * capabilities, seccomp on) until it is killed. */
  const char *layer_upper;
  const char *layer_work;
  bool hold;
  /* issue 17: the jail of a zygote (zygote.h), whose children make jails of
   * their own: its /proc has no masks (the kernel lets a user namespace
   * mount a proc only where one is wholly visible).  Never for a jail that
   * runs a snippet. */
  bool zygote;
  /* --disk: the jail's user namespace, and the mount namespace its own is
   * copied from (where the disk's tmpfs is mounted), are these (paths, e.g.
   * /proc/self/fd/N), kept by the keeper across stop and start, instead of
   * new ones; the id maps are theirs.  Both or neither. */
  const char *join_userns;
  const char *join_mntns;
  uint64_t tmp_size; /* bytes for /tmp and for the working directory, each */
  uint64_t tmp_inodes;
  /* Files written into the working directory before exec (e.g. snippet.py). */
  const struct csr_file *files;
  size_t n_files;

  /* Files in and out (csrun run --in, --mount, --out; see supervisor/files.h). */
  bool has_inputs; /* in_fd: a file pack (util/pack.h) unpacked below / before exec */
  int in_fd;
  bool has_outputs; /* out_fd: init packs /work there after the payload's end */
  int out_fd;
  const char *const *out_globs; /* --out-path: only what matches (none: everything) */
  size_t n_out_globs;
  uint64_t out_max; /* bytes of file data packed at most; the rest is listed as skipped */
  const struct csr_jail_bind *binds;
  size_t n_binds;

  /* rlimits applied to the payload. 0 = leave the default below. */
  uint64_t rlimit_nofile; /* default 1024 */
  uint64_t rlimit_fsize;  /* default tmp_size */
  uint64_t rlimit_as;     /* 0: not set */
  uint64_t rlimit_data;   /* 0: not set (private writable memory, since Linux 4.7) */
  uint64_t rlimit_nproc;  /* 0: not set (counted per user namespace since Linux 5.14) */

  /* Standard streams of the payload: fds in the supervisor, -1 = /dev/null. */
  int stdin_fd, stdout_fd, stderr_fd;
  /* Supervisor fds the payload gets as fds 3, 4, ... (the gate's verdict pipe,
   * its precompiled code). */
#define CSR_MAX_EXTRA_FDS 4
  int extra_fds[CSR_MAX_EXTRA_FDS];
  size_t n_extra_fds;
};

/* Zero SPEC (no maps: the invoking user -> 0). */
void jail_spec_init (struct jail_spec *spec);
/* The snippet defaults: /work, hostname csrun, 64 MiB tmpfs, fds -> /dev/null. */
void jail_snippet_init (struct jail_snippet *sn);

#endif
