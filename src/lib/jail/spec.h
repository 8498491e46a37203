/* csrun — struct jail_spec: everything the jail engine needs to know about one
 * jailed process.  Every face (run, batch, OCI, sandbox) fills one of these. */
#ifndef CSRUN_SPEC_H
#define CSRUN_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct csr_cgroup;
struct oci_config;
struct csr_oci_premounts;

struct csr_idmap
{
  uint32_t inside, outside, count;
};

#define CSR_MAX_IDMAPS 8

struct csr_file
{
  const char *path; /* path inside the jail, relative to the working directory or absolute */
  const char *data;
  size_t len;
  mode_t mode;
};

struct jail_spec
{
  /* Root filesystem: a directory, bind-mounted read-only. */
  const char *rootfs_dir;
  bool rootfs_writable; /* reserved for OCI bundles with root.readonly=false */

  /* Process. */
  char *const *argv; /* argv[0] is an absolute path inside the jail */
  char *const *envp; /* the whole environment; nothing is inherited */
  const char *cwd;   /* default /work */
  const char *hostname;
  bool host_net; /* share the host's network namespace (--net host): no isolation */

  /* Identity: user-namespace maps; empty means "invoking user -> 0". */
  struct csr_idmap uid_map[CSR_MAX_IDMAPS];
  size_t n_uid_map;
  struct csr_idmap gid_map[CSR_MAX_IDMAPS];
  size_t n_gid_map;
  bool use_newidmap; /* write the maps through newuidmap/newgidmap (subordinate ranges) */
  uid_t uid;         /* uid/gid the process runs as inside (0 by default) */
  gid_t gid;

  /* Writable tmpfs mounts. */
  uint64_t tmp_size; /* bytes for /tmp and for the working directory, each */
  uint64_t tmp_inodes;

  /* Files written into the working directory before exec (e.g. snippet.py). */
  const struct csr_file *files;
  size_t n_files;

  /* rlimits applied to the payload. 0 = leave the default below. */
  uint64_t rlimit_nofile; /* default 1024 */
  uint64_t rlimit_fsize;  /* default tmp_size */
  uint64_t rlimit_as;     /* 0: not set */
  uint64_t rlimit_nproc;  /* 0: not set (counted per user namespace since Linux 5.14) */

  /* Standard streams of the payload: fds in the supervisor, -1 = /dev/null. */
  int stdin_fd, stdout_fd, stderr_fd;
  /* Supervisor fds the payload gets as fds 3, 4, ... (the gate's verdict pipe,
   * its precompiled code). */
#define CSR_MAX_EXTRA_FDS 4
  int extra_fds[CSR_MAX_EXTRA_FDS];
  size_t n_extra_fds;

  /* Seams for later layers (seccomp, cgroups, network modes). */
  const void *seccomp_bpf;   /* struct sock_fprog *, loaded last before exec; NULL = none */
  struct csr_cgroup *cgroup; /* snippet or container cgroup the jail starts in; NULL = none */

  /* An OCI container (csrun create): when set, the jail follows the bundle's
   * config.json instead of the snippet layout above: its namespaces, mounts,
   * devices, process, capabilities and rlimits; the process is pid 1 itself
   * (no csrun init) and, with an exec FIFO, waits for `csrun start`. */
  const struct oci_config *oci;
  /* The first N of the preserved fds are LISTEN_FDS (socket activation). */
  int oci_listen_fds;
  /* Bind sources and device nodes create made as root, or NULL (oci-premount.c). */
  struct csr_oci_premounts *oci_premounts;

  const char *oci_bundle;    /* absolute: relative bind sources are relative to it */
  int oci_exec_fifo;         /* O_PATH fd of the exec FIFO, or -1: exec at once */
  int oci_console;           /* connected console socket (process.terminal), or -1 */
  int oci_preserve_fds;      /* fds 3 .. 3+N-1 stay open for the process */
  bool oci_no_pivot;         /* --no-pivot: move the root and chroot instead */
  bool oci_joined;           /* the namespaces given by path are joined already */
  bool oci_seccomp_listener; /* load seccomp_bpf with a listener, hand it over (CSR_SYNC_SECCOMP) */
};

void jail_spec_init (struct jail_spec *spec);

#endif
