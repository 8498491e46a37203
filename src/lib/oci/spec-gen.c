/* csrun — `csrun spec`: the default config.json (oci-config.h,
 * oci_config_default_json), written with the shared generator
 * (util/json-gen.h). */

#include "config.h"
#include "oci-config.h"

#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

#include "../util/cleanup.h"
#include "../util/json-gen.h"

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

static void
gen_mount (struct csr_jgen *j, const char *dest, const char *type, const char *source,
           const char *const *options)
{
  csr_jgen_map_open (j);
  csr_jgen_kv_str (j, "destination", dest);
  csr_jgen_kv_str (j, "type", type);
  csr_jgen_kv_str (j, "source", source);
  if (options)
    csr_jgen_kv_strv (j, "options", options);
  csr_jgen_map_close (j);
}

static void
gen_idmap (struct csr_jgen *j, const char *key, unsigned long host_id)
{
  csr_jgen_str (j, key);
  csr_jgen_array_open (j);
  csr_jgen_map_open (j);
  csr_jgen_kv_int (j, "containerID", 0);
  csr_jgen_kv_int (j, "hostID", (long long)host_id);
  csr_jgen_kv_int (j, "size", 1);
  csr_jgen_map_close (j);
  csr_jgen_array_close (j);
}

/* "process": sh on a terminal as root, the three default capabilities,
 * RLIMIT_NOFILE 1024, no_new_privs. */
static void
gen_process (struct csr_jgen *j)
{
  static const char *const env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL };
  static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };

  csr_jgen_str (j, "process");
  csr_jgen_map_open (j);
  csr_jgen_str (j, "terminal");
  csr_jgen_bool (j, true);
  csr_jgen_str (j, "user");
  csr_jgen_map_open (j);
  csr_jgen_kv_int (j, "uid", 0);
  csr_jgen_kv_int (j, "gid", 0);
  csr_jgen_map_close (j);
  csr_jgen_kv_strv (j, "args", (const char *const[]){ "sh", NULL });
  csr_jgen_kv_strv (j, "env", env);
  csr_jgen_kv_str (j, "cwd", "/");
  csr_jgen_str (j, "capabilities");
  csr_jgen_map_open (j);
  csr_jgen_kv_strv (j, "bounding", caps);
  csr_jgen_kv_strv (j, "effective", caps);
  csr_jgen_kv_strv (j, "permitted", caps);
  csr_jgen_map_close (j);
  csr_jgen_str (j, "rlimits");
  csr_jgen_array_open (j);
  csr_jgen_map_open (j);
  csr_jgen_kv_str (j, "type", "RLIMIT_NOFILE");
  csr_jgen_kv_int (j, "hard", 1024);
  csr_jgen_kv_int (j, "soft", 1024);
  csr_jgen_map_close (j);
  csr_jgen_array_close (j);
  csr_jgen_str (j, "noNewPrivileges");
  csr_jgen_bool (j, true);
  csr_jgen_map_close (j);
}

/* "mounts": proc, /dev, devpts, shm, mqueue, sysfs (and cgroup when root). */
static void
gen_mounts (struct csr_jgen *j, bool rootless)
{
  static const char *const dev_opts[]
      = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts_opts[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  static const char *const shm_opts[]
      = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static const char *const mqueue_opts[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const sysfs_opts[] = { "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const sysfs_bind_opts[] = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const cgroup_opts[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };

  csr_jgen_str (j, "mounts");
  csr_jgen_array_open (j);
  gen_mount (j, "/proc", "proc", "proc", NULL);
  gen_mount (j, "/dev", "tmpfs", "tmpfs", dev_opts);
  /* In a user namespace the host's tty group (5) is unmapped: mounting devpts
   * with gid=5 fails, so the rootless spec leaves the option out. */
  if (rootless)
    {
      const char *opts[N_ELEMENTS (pts_opts)];
      size_t n = 0;
      for (const char *const *o = pts_opts; *o; o++)
        if (strncmp (*o, "gid=", 4) != 0)
          opts[n++] = *o;
      opts[n] = NULL;
      gen_mount (j, "/dev/pts", "devpts", "devpts", opts);
    }
  else
    gen_mount (j, "/dev/pts", "devpts", "devpts", pts_opts);
  gen_mount (j, "/dev/shm", "tmpfs", "shm", shm_opts);
  gen_mount (j, "/dev/mqueue", "mqueue", "mqueue", mqueue_opts);
  /* sysfs can't be mounted by a user namespace that doesn't own the network
   * namespace: bind the host's instead.  Nor can cgroup v1 hierarchies be. */
  if (rootless)
    gen_mount (j, "/sys", "none", "/sys", sysfs_bind_opts);
  else
    {
      gen_mount (j, "/sys", "sysfs", "sysfs", sysfs_opts);
      gen_mount (j, "/sys/fs/cgroup", "cgroup", "cgroup", cgroup_opts);
    }
  csr_jgen_array_close (j);
}

/* "linux": id maps (rootless) or the deny-all device rule (root), the
 * namespaces, masked and read-only paths. */
static void
gen_linux (struct csr_jgen *j, bool rootless, uid_t uid, gid_t gid)
{
  /* runc's and crun's `spec` list (the same ten), plus what Docker's default
   * masks on top: /proc/interrupts (per-CPU interrupt counts, a side
   * channel) and /sys/devices/virtual/powercap (RAPL energy counters,
   * CVE-2020-8694).  /proc/cmdline stays readable, as in all three: it is
   * boot configuration, and tools in containers read it. */
  static const char *const masked[] = { "/proc/acpi",
                                        "/proc/asound",
                                        "/proc/interrupts",
                                        "/proc/kcore",
                                        "/proc/keys",
                                        "/proc/latency_stats",
                                        "/proc/timer_list",
                                        "/proc/timer_stats",
                                        "/proc/sched_debug",
                                        "/sys/devices/virtual/powercap",
                                        "/sys/firmware",
                                        "/proc/scsi",
                                        NULL };
  static const char *const readonly[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };
  static const char *const namespaces[] = { "pid", "network", "ipc", "uts", "mount", NULL };

  csr_jgen_str (j, "linux");
  csr_jgen_map_open (j);
  if (rootless)
    {
      gen_idmap (j, "uidMappings", (unsigned long)uid);
      gen_idmap (j, "gidMappings", (unsigned long)gid);
    }
  else
    {
      csr_jgen_str (j, "resources");
      csr_jgen_map_open (j);
      csr_jgen_str (j, "devices");
      csr_jgen_array_open (j);
      csr_jgen_map_open (j);
      csr_jgen_str (j, "allow");
      csr_jgen_bool (j, false);
      csr_jgen_kv_str (j, "access", "rwm");
      csr_jgen_map_close (j);
      csr_jgen_array_close (j);
      csr_jgen_map_close (j);
    }
  csr_jgen_str (j, "namespaces");
  csr_jgen_array_open (j);
  for (const char *const *ns = namespaces; *ns; ns++)
    {
      csr_jgen_map_open (j);
      csr_jgen_kv_str (j, "type", *ns);
      csr_jgen_map_close (j);
    }
  /* A cgroup namespace only on a cgroup v2 (unified) host, as `crun spec`
   * (runc's has none): on v1 and hybrid hosts runc's tests add one, and a
   * second entry is an error for runc, crun and csrun alike. */
  struct statfs sfs;
  if (statfs ("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    {
      csr_jgen_map_open (j);
      csr_jgen_kv_str (j, "type", "cgroup");
      csr_jgen_map_close (j);
    }
  if (rootless)
    {
      csr_jgen_map_open (j);
      csr_jgen_kv_str (j, "type", "user");
      csr_jgen_map_close (j);
    }
  csr_jgen_array_close (j);
  csr_jgen_kv_strv (j, "maskedPaths", masked);
  csr_jgen_kv_strv (j, "readonlyPaths", readonly);
  csr_jgen_map_close (j);
}

char *
oci_config_default_json (bool rootless, uid_t uid, gid_t gid)
{
  struct csr_jgen jg;
  struct csr_jgen *j = &jg;
  if (csr_jgen_init (j, true, NULL) < 0)
    return NULL;

  csr_jgen_map_open (j);
  csr_jgen_kv_str (j, "ociVersion", "1.0.2");
  gen_process (j);
  csr_jgen_str (j, "root");
  csr_jgen_map_open (j);
  csr_jgen_kv_str (j, "path", "rootfs");
  csr_jgen_str (j, "readonly");
  csr_jgen_bool (j, true);
  csr_jgen_map_close (j);
  csr_jgen_kv_str (j, "hostname", "csrun");
  gen_mounts (j, rootless);
  gen_linux (j, rootless, uid, gid);
  csr_jgen_map_close (j);

  size_t len = 0;
  cleanup_free char *buf = csr_jgen_finish (j, "the default config.json", &len, NULL);
  if (buf == NULL)
    return NULL;
  bool nl = len > 0 && buf[len - 1] == '\n';
  char *out = malloc (len + 2);
  if (out == NULL)
    return NULL;
  memcpy (out, buf, len);
  if (!nl)
    out[len++] = '\n';
  out[len] = '\0';
  return out;
}
