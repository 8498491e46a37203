/* csrun — the OCI runtime spec's config.json (runtime-spec 1.0-1.2), parsed
 * strictly with yajl into plain data.  The jail engine reads this struct
 * (struct jail_spec.oci): a bundle is one more way to describe a jail. */
#ifndef CSRUN_OCI_CONFIG_H
#define CSRUN_OCI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"
#include "../util/json.h"

struct oci_mount
{
  char *destination; /* absolute path in the container */
  char *type;        /* may be NULL (a bind mount, when options say bind/rbind) */
  char *source;      /* may be NULL */
  char **options;    /* NULL-terminated; may be empty */
  size_t n_options;
};

struct oci_idmap
{
  uint32_t container_id, host_id, size;
};

struct oci_rlimit
{
  int resource; /* RLIMIT_* (from "RLIMIT_NOFILE" etc.; unknown names are an error) */
  uint64_t soft, hard;
};

/* linux.namespaces[] type -> CLONE_NEW* flag. */
struct oci_namespace
{
  int flag;   /* CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS,
                 CLONE_NEWUSER, CLONE_NEWCGROUP, CLONE_NEWTIME ("time") */
  char *path; /* join this namespace instead of creating one; NULL: new */
};

struct oci_hook
{
  char *path;  /* absolute */
  char **args; /* NULL-terminated, may be empty (then argv is just path) */
  size_t n_args;
  char **env; /* NULL-terminated "K=V" */
  size_t n_env;
  int timeout_s; /* 0: none given */
};

enum
{
  OCI_HOOK_PRESTART,
  OCI_HOOK_CREATE_RUNTIME,
  OCI_HOOK_CREATE_CONTAINER,
  OCI_HOOK_START_CONTAINER,
  OCI_HOOK_POSTSTART,
  OCI_HOOK_POSTSTOP,
  OCI_HOOK_N,
};
/* "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop" */
const char *oci_hook_stage_name (int stage);

struct oci_device
{
  char type;  /* 'c', 'b', 'u' (= 'c'), 'p' */
  char *path; /* absolute, in the container */
  int64_t major, minor;
  bool has_file_mode;
  uint32_t file_mode;
  bool has_uid, has_gid;
  uint32_t uid, gid;
};

/* One linux.resources.devices rule (the device cgroup's allow list). */
enum
{
  OCI_DEV_READ = 1,
  OCI_DEV_WRITE = 2,
  OCI_DEV_MKNOD = 4,
  OCI_DEV_RWM = 7,
};
struct oci_dev_rule
{
  bool allow;
  char type;            /* 'a' (any: "type" absent), 'c' or 'b' */
  int64_t major, minor; /* 0 .. UINT32_MAX, or -1: any ("major"/"minor" absent or -1) */
  unsigned access;      /* OCI_DEV_* bits, never 0 */
};

struct oci_caps
{
  /* Bit (1ULL << CAP_X) per capability named in each set. */
  uint64_t bounding, effective, inheritable, permitted, ambient;
};

struct oci_config
{
  char *oci_version;

  /* root */
  char *root_path; /* as written: relative paths are relative to the bundle */
  bool root_readonly;

  struct oci_mount *mounts;
  size_t n_mounts;

  /* process (has_process false: config without one, only valid for `spec` round trips) */
  bool has_process;
  bool terminal;
  bool has_console_size;
  unsigned console_height, console_width;
  uint32_t uid, gid;
  uint32_t *additional_gids;
  size_t n_additional_gids;
  bool has_umask;
  uint32_t umask;
  char **args; /* NULL-terminated, at least one */
  size_t n_args;
  char **env; /* NULL-terminated "K=V" */
  size_t n_env;
  char *cwd; /* absolute */
  bool has_caps;
  struct oci_caps caps;
  char *unknown_cap;     /* the first capability name not known (ignored), or NULL */
  size_t n_unknown_caps; /* how many names were ignored */
  struct oci_rlimit *rlimits;
  size_t n_rlimits;
  bool no_new_privileges;
  bool has_oom_score_adj;
  int oom_score_adj;
  char *apparmor_profile; /* parsed, not applied (reported by `features`) */
  char *selinux_label;

  char *hostname;
  char *domainname;

  /* linux */
  struct oci_namespace *namespaces;
  size_t n_namespaces;
  struct oci_idmap *uid_mappings, *gid_mappings;
  size_t n_uid_mappings, n_gid_mappings;
  char **masked_paths;
  size_t n_masked_paths;
  char **readonly_paths;
  size_t n_readonly_paths;
  char *cgroups_path;
  struct
  {
    bool has_memory_limit, has_memory_swap, has_pids_limit, has_cpu_quota, has_cpu_period,
        has_cpu_shares;
    int64_t memory_limit; /* bytes; -1 = unlimited */
    int64_t memory_swap;
    int64_t pids_limit; /* <= 0 = unlimited */
    int64_t cpu_quota;  /* us; -1 = unlimited */
    uint64_t cpu_period;
    uint64_t cpu_shares;
    char *cpu_cpus, *cpu_mems;
    /* linux.resources.devices in order (has_devices: the array is there, maybe empty). */
    bool has_devices;
    struct oci_dev_rule *devices;
    size_t n_devices;
    /* The whole linux.resources object re-serialised (for
     * oci_cgroup_resources_parse, which has the rest), or NULL. */
    char *json;
  } resources;
  char *seccomp_json; /* linux.seccomp re-serialised (for csr_seccomp_compile), or NULL */
  char **sysctl_keys, **sysctl_values;
  size_t n_sysctl;
  struct oci_device *devices;
  size_t n_devices;
  char *rootfs_propagation; /* "private", "rprivate", "slave", "rslave", "shared", "rshared",
                               "unbindable", "runbindable", or NULL */
  char *mount_label;

  char **annotation_keys, **annotation_values;
  size_t n_annotations;

  struct oci_hook *hooks[OCI_HOOK_N];
  size_t n_hooks[OCI_HOOK_N];
};

/* Parse config.json text.  Strict: the document must be an object with a
 * string "ociVersion" (1.x); every known field must have its spec type
 * (errors name the JSON path: "process.args[1]: expected a string, got a
 * number"); required fields (ociVersion, root.path, process.cwd and
 * process.args when process is present, mounts[].destination, namespaces[].type,
 * uid/gid mappings' fields, hooks[].path) must be present; unknown
 * capability names are ignored (counted in n_unknown_caps, as crun does);
 * unknown rlimit, namespace and device type names are errors; unknown
 * fields elsewhere (vendor extensions: windows, solaris, vm, linux.intelRdt,
 * ...) are ignored.  Returns 0, or -1 with one line in *ERR. */
int oci_config_parse (const char *json, size_t len, struct oci_config *c, csr_error **err);
/* Read and parse PATH (at most 4 MiB); errors start with the path. */
int oci_config_load (const char *path, struct oci_config *c, csr_error **err);
void oci_config_release (struct oci_config *c);
/* process.terminal of the config at PATH, read without checking the rest
 * (false when unreadable or not JSON): `create` refuses a terminal without
 * --console-socket before the config's own errors, as crun does. */
bool oci_config_peek_terminal (const char *path);

/* The value of annotation KEY, or NULL. */
const char *oci_config_annotation (const struct oci_config *c, const char *key);
/* Whether the config has a namespace of FLAG (CLONE_NEW*), and its path (may be NULL). */
bool oci_config_has_namespace (const struct oci_config *c, int flag, const char **path);

/* `csrun spec`: a default config.json (runtime-spec 1.0.2 layout, like `runc
 * spec`): process "sh" with a terminal, rootfs "rootfs" read-only, the usual
 * mounts (proc, /dev tmpfs, devpts, shm, mqueue, sysfs, cgroup), default
 * capabilities (AUDIT_WRITE, KILL, NET_BIND_SERVICE), RLIMIT_NOFILE 1024,
 * masked and read-only paths, namespaces pid network ipc uts mount (and
 * cgroup on a cgroup v2 host, as crun); ROOTLESS adds a user namespace mapping the
 * caller's uid and gid to 0, binds sysfs instead of mounting it, and drops
 * what a user namespace can't mount (devpts's gid=5 option, the cgroup mount)
 * and the device cgroup rule.  Returns malloc'ed, pretty-printed JSON ending in
 * a newline, or NULL when out of memory. */
char *oci_config_default_json (bool rootless, uid_t uid, gid_t gid);

/* The name cgroup-res.c still uses for csr_json_type_name (util/json.h);
 * new code calls that. */

#endif
