#include "config.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <ctype.h>
#include <linux/capability.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "oci/oci-config.h"

#include "helpers.h"

/* ------------------------------------------------------------- helpers */

/* The JSON below is written with ' for " (none of it needs a real '). */
static char *
dq (const char *s)
{
  char *t = strdup (s);
  cr_assert_not_null (t);
  for (char *p = t; *p; p++)
    if (*p == '\'')
      *p = '"';
  return t;
}

static void
parse_ok (const char *sq, struct oci_config *c)
{
  char *json = dq (sq);
  csr_error *e = NULL;
  int r = oci_config_parse (json, strlen (json), c, &e);
  cr_assert_eq (r, 0, "unexpected error: %s\nin: %s", e ? csr_error_text (e) : "?", json);
  cr_assert_null (e);
  free (json);
}

static void
parse_fails (const char *json, size_t len, const char *expect)
{
  struct oci_config c;
  csr_error *e = NULL;
  int r = oci_config_parse (json, len, &c, &e);
  cr_assert_eq (r, -1, "accepted: %s", json);
  cr_assert_not_null (e);
  const char *text = csr_error_text (e);
  cr_assert_not_null (strstr (text, expect), "error\n  '%s'\nlacks\n  '%s'\nfor %s", text, expect,
                      json);
  cr_assert_null (strchr (text, '\n'), "error spans lines: %s", text);
  /* A failed parse leaves nothing allocated. */
  cr_assert_null (c.oci_version);
  cr_assert_null (c.root_path);
  cr_assert_eq (c.n_mounts, 0);
  csr_error_free (e);
}

static char *
make_tmpdir (void)
{
  return test_tmpdir ("test-oci-config");
}

static char *
write_file (const char *dir, const char *name, const char *data, size_t len)
{
  char *path = NULL;
  cr_assert_geq (asprintf (&path, "%s/%s", dir, name), 0);
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  cr_assert_eq (fwrite (data, 1, len, f), len);
  cr_assert_eq (fclose (f), 0);
  return path;
}

/* ------------------------------------------------ a podman 4.3 style config */

#define CTR_ID "3f0b2c9d5e8a41b7a6c4d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1"
#define USERDATA "/run/user/1000/containers/overlay-containers/" CTR_ID "/userdata"

static const char podman_config[]
    = "{"
      "'ociVersion': '1.0.2-dev',"
      "'process': {"
      "  'user': {'uid': 1000, 'gid': 1000, 'umask': 18, 'additionalGids': [1000, 10, 4294967294]},"
      "  'args': ['/bin/sh', '-c', 'echo hello'],"
      "  'env': ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',"
      "          'TERM=xterm', 'container=podman', 'HOSTNAME=3f0b2c9d5e8a', 'HOME=/home/u',"
      "          'EMPTY='],"
      "  'cwd': '/home/u',"
      "  'capabilities': {"
      "    'bounding': ['CAP_CHOWN', 'CAP_DAC_OVERRIDE', 'CAP_FOWNER', 'CAP_FSETID', 'CAP_KILL',"
      "                 'CAP_NET_BIND_SERVICE', 'CAP_SETFCAP', 'CAP_SETGID', 'CAP_SETPCAP',"
      "                 'CAP_SETUID', 'CAP_SYS_CHROOT'],"
      "    'effective': ['CAP_CHOWN', 'CAP_KILL'],"
      "    'inheritable': [],"
      "    'permitted': ['CAP_CHOWN', 'CAP_KILL', 'CAP_CHECKPOINT_RESTORE'],"
      "    'ambient': ['CAP_NET_BIND_SERVICE']"
      "  },"
      "  'rlimits': ["
      "    {'type': 'RLIMIT_NOFILE', 'hard': 524288, 'soft': 524288},"
      "    {'type': 'RLIMIT_NPROC', 'hard': 4194304, 'soft': 4194304},"
      "    {'type': 'RLIMIT_MEMLOCK', 'hard': 18446744073709551615, 'soft': 8388608}"
      "  ],"
      "  'terminal': true,"
      "  'consoleSize': {'height': 50, 'width': 132},"
      "  'oomScoreAdj': -500,"
      "  'apparmorProfile': 'containers-default-0.50.1',"
      "  'selinuxLabel': 'system_u:system_r:container_t:s0:c123,c456',"
      "  'noNewPrivileges': true"
      "},"
      "'root': {'path': '/home/u/.local/share/containers/storage/overlay/abc/merged',"
      "         'readonly': false},"
      "'hostname': '3f0b2c9d5e8a',"
      "'domainname': 'example.test',"
      "'mounts': ["
      "  {'destination': '/proc', 'type': 'proc', 'source': 'proc',"
      "   'options': ['nosuid', 'noexec', 'nodev']},"
      "  {'destination': '/dev', 'type': 'tmpfs', 'source': 'tmpfs',"
      "   'options': ['nosuid', 'strictatime', 'mode=755', 'size=65536k']},"
      "  {'destination': '/sys', 'type': 'sysfs', 'source': 'sysfs',"
      "   'options': ['nosuid', 'noexec', 'nodev', 'ro']},"
      "  {'destination': '/dev/pts', 'type': 'devpts', 'source': 'devpts',"
      "   'options': ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5']},"
      "  {'destination': '/dev/mqueue', 'type': 'mqueue', 'source': 'mqueue',"
      "   'options': ['nodev', 'noexec', 'nosuid']},"
      "  {'destination': '/etc/hostname', 'type': 'bind', 'source': '" USERDATA "/hostname',"
      "   'options': ['bind', 'rprivate']},"
      "  {'destination': '/etc/resolv.conf', 'type': 'bind',"
      "   'source': '" USERDATA "/resolv.conf', 'options': ['bind', 'rprivate']},"
      "  {'destination': '/run/.containerenv', 'type': 'bind',"
      "   'source': '" USERDATA "/.containerenv', 'options': ['bind', 'rprivate']},"
      "  {'destination': '/dev/shm', 'type': 'bind', 'source': '" USERDATA "/shm',"
      "   'options': ['bind', 'rprivate', 'nosuid', 'noexec', 'nodev']},"
      "  {'destination': '/data', 'source': '/home/u/data',"
      "   'options': ['rbind', 'rw', 'z'], 'uidMappings': [], 'gidMappings': []},"
      "  {'destination': '/sys/fs/cgroup', 'type': 'cgroup', 'source': 'cgroup',"
      "   'options': ['rprivate', 'nosuid', 'noexec', 'nodev', 'relatime', 'ro']}"
      "],"
      "'hooks': {"
      "  'prestart': [{'path': '/usr/bin/nvidia-container-toolkit',"
      "                'args': ['nvidia-container-toolkit', 'prestart'],"
      "                'env': ['PATH=/usr/bin:/bin', 'NVIDIA_VISIBLE_DEVICES=all']}],"
      "  'createRuntime': [{'path': '/usr/libexec/oci/hooks.d/oci-systemd-hook', 'timeout': 10},"
      "                    {'path': '/usr/local/bin/second'}],"
      "  'createContainer': [{'path': '/usr/bin/mount-hook', 'args': ['mount-hook', '-v']}],"
      "  'startContainer': [{'path': '/sbin/ldconfig'}],"
      "  'poststart': [],"
      "  'poststop': [{'path': '/usr/bin/podman', 'args': ['/usr/bin/podman', '--root',"
      "                '/home/u/.local/share/containers/storage', 'container', 'cleanup',"
      "                '" CTR_ID "'], 'timeout': 30}]"
      "},"
      "'annotations': {"
      "  'io.container.manager': 'libpod',"
      "  'io.kubernetes.cri-o.Created': '2023-01-15T10:20:30.123456789Z',"
      "  'io.podman.annotations.autoremove': 'TRUE',"
      "  'org.opencontainers.image.stopSignal': '15',"
      "  'io.podman.annotations.empty': ''"
      "},"
      "'linux': {"
      "  'sysctl': {'net.ipv4.ping_group_range': '0 0', 'net.ipv4.ip_unprivileged_port_start': "
      "'0'},"
      "  'resources': {"
      "    'devices': [{'allow': false, 'access': 'rwm'},"
      "                {'allow': true, 'type': 'c', 'major': 10, 'minor': 229, 'access': 'rwm'},"
      "                {'allow': true, 'type': 'b', 'major': -1, 'minor': -1, 'access': 'r'}],"
      "    'memory': {'limit': 536870912, 'reservation': 268435456, 'swap': 1073741824,"
      "               'swappiness': 60, 'disableOOMKiller': false},"
      "    'cpu': {'shares': 512, 'quota': 50000, 'period': 100000, 'cpus': '0-1', 'mems': '0'},"
      "    'pids': {'limit': 2048},"
      "    'blockIO': {'weight': 500},"
      "    'hugepageLimits': [{'pageSize': '2MB', 'limit': 0}],"
      "    'unified': {'memory.high': '400000000'}"
      "  },"
      "  'cgroupsPath': 'user.slice:libpod:" CTR_ID "',"
      "  'namespaces': ["
      "    {'type': 'pid'}, {'type': 'network', 'path': '/run/user/1000/netns/netns-1d2c3b4a'},"
      "    {'type': 'ipc'}, {'type': 'uts'}, {'type': 'mount'}, {'type': 'cgroup'},"
      "    {'type': 'user'}, {'type': 'time', 'path': ''}"
      "  ],"
      "  'uidMappings': [{'containerID': 0, 'hostID': 1000, 'size': 1},"
      "                  {'containerID': 1, 'hostID': 100000, 'size': 65536}],"
      "  'gidMappings': [{'containerID': 0, 'hostID': 1000, 'size': 1},"
      "                  {'containerID': 1, 'hostID': 100000, 'size': 65536}],"
      "  'seccomp': {"
      "    'defaultAction': 'SCMP_ACT_ERRNO', 'defaultErrnoRet': 38,"
      "    'architectures': ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],"
      "    'syscalls': ["
      "      {'names': ['read', 'write', 'exit_group'], 'action': 'SCMP_ACT_ALLOW'},"
      "      {'names': ['clone'], 'action': 'SCMP_ACT_ALLOW',"
      "       'args': [{'index': 0, 'value': 2114060288, 'valueTwo': 0,"
      "                 'op': 'SCMP_CMP_MASKED_EQ'}]},"
      "      {'names': ['personality'], 'action': 'SCMP_ACT_ERRNO', 'errnoRet': 1,"
      "       'comment': 'a/b \\\\u00e9 \\u00e9', 'includes': {}, 'excludes': {'caps': null},"
      "       'flag': true, 'ratio': -1.5e3}"
      "    ]"
      "  },"
      "  'maskedPaths': ['/proc/acpi', '/proc/kcore', '/proc/keys', '/proc/latency_stats',"
      "                  '/proc/timer_list', '/proc/timer_stats', '/proc/sched_debug',"
      "                  '/proc/scsi', '/sys/firmware', '/sys/fs/selinux', '/sys/dev/block'],"
      "  'readonlyPaths': ['/proc/asound', '/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys',"
      "                    '/proc/sysrq-trigger'],"
      "  'devices': ["
      "    {'path': '/dev/fuse', 'type': 'c', 'major': 10, 'minor': 229, 'fileMode': 438,"
      "     'uid': 0, 'gid': 0},"
      "    {'path': '/dev/sda', 'type': 'b', 'major': 8, 'minor': 0},"
      "    {'path': '/dev/kmsg', 'type': 'u', 'major': 1, 'minor': 11, 'fileMode': 420,"
      "     'uid': 1000},"
      "    {'path': '/dev/myfifo', 'type': 'p'}"
      "  ],"
      "  'rootfsPropagation': 'rslave',"
      "  'mountLabel': 'system_u:object_r:container_file_t:s0:c123,c456'"
      "}"
      "}";

static void
check_podman (const struct oci_config *c)
{
  cr_assert_str_eq (c->oci_version, "1.0.2-dev");
  cr_assert_str_eq (c->root_path, "/home/u/.local/share/containers/storage/overlay/abc/merged");
  cr_assert_not (c->root_readonly);

  /* process */
  cr_assert (c->has_process);
  cr_assert (c->terminal);
  cr_assert (c->has_console_size);
  cr_assert_eq (c->console_height, 50);
  cr_assert_eq (c->console_width, 132);
  cr_assert_eq (c->uid, 1000);
  cr_assert_eq (c->gid, 1000);
  cr_assert (c->has_umask);
  cr_assert_eq (c->umask, 022);
  cr_assert_eq (c->n_additional_gids, 3);
  cr_assert_eq (c->additional_gids[0], 1000);
  cr_assert_eq (c->additional_gids[1], 10);
  cr_assert_eq (c->additional_gids[2], 4294967294u);
  cr_assert_eq (c->n_args, 3);
  cr_assert_str_eq (c->args[0], "/bin/sh");
  cr_assert_str_eq (c->args[1], "-c");
  cr_assert_str_eq (c->args[2], "echo hello");
  cr_assert_null (c->args[3]);
  cr_assert_eq (c->n_env, 6);
  cr_assert_str_eq (c->env[2], "container=podman");
  cr_assert_str_eq (c->env[5], "EMPTY=");
  cr_assert_null (c->env[6]);
  cr_assert_str_eq (c->cwd, "/home/u");
  cr_assert (c->has_caps);
  uint64_t b = (1ULL << CAP_CHOWN) | (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_FOWNER)
               | (1ULL << CAP_FSETID) | (1ULL << CAP_KILL) | (1ULL << CAP_NET_BIND_SERVICE)
               | (1ULL << CAP_SETFCAP) | (1ULL << CAP_SETGID) | (1ULL << CAP_SETPCAP)
               | (1ULL << CAP_SETUID) | (1ULL << CAP_SYS_CHROOT);
  cr_assert_eq (c->caps.bounding, b);
  cr_assert_eq (c->caps.effective, (1ULL << CAP_CHOWN) | (1ULL << CAP_KILL));
  cr_assert_eq (c->caps.inheritable, 0);
  cr_assert_eq (c->caps.permitted,
                (1ULL << CAP_CHOWN) | (1ULL << CAP_KILL) | (1ULL << CAP_CHECKPOINT_RESTORE));
  cr_assert_eq (c->caps.ambient, 1ULL << CAP_NET_BIND_SERVICE);
  cr_assert_eq (c->n_rlimits, 3);
  cr_assert_eq (c->rlimits[0].resource, RLIMIT_NOFILE);
  cr_assert_eq (c->rlimits[0].soft, 524288);
  cr_assert_eq (c->rlimits[0].hard, 524288);
  cr_assert_eq (c->rlimits[1].resource, RLIMIT_NPROC);
  cr_assert_eq (c->rlimits[2].resource, RLIMIT_MEMLOCK);
  cr_assert_eq (c->rlimits[2].soft, 8388608);
  cr_assert_eq (c->rlimits[2].hard, UINT64_MAX);
  cr_assert (c->no_new_privileges);
  cr_assert (c->has_oom_score_adj);
  cr_assert_eq (c->oom_score_adj, -500);
  cr_assert_str_eq (c->apparmor_profile, "containers-default-0.50.1");
  cr_assert_str_eq (c->selinux_label, "system_u:system_r:container_t:s0:c123,c456");
  cr_assert_str_eq (c->hostname, "3f0b2c9d5e8a");
  cr_assert_str_eq (c->domainname, "example.test");

  /* mounts */
  cr_assert_eq (c->n_mounts, 11);
  cr_assert_str_eq (c->mounts[0].destination, "/proc");
  cr_assert_str_eq (c->mounts[0].type, "proc");
  cr_assert_str_eq (c->mounts[0].source, "proc");
  cr_assert_eq (c->mounts[0].n_options, 3);
  cr_assert_str_eq (c->mounts[3].destination, "/dev/pts");
  cr_assert_eq (c->mounts[3].n_options, 6);
  cr_assert_str_eq (c->mounts[3].options[5], "gid=5");
  cr_assert_null (c->mounts[3].options[6]);
  cr_assert_str_eq (c->mounts[5].destination, "/etc/hostname");
  cr_assert_str_eq (c->mounts[5].type, "bind");
  cr_assert_str_eq (c->mounts[5].source, USERDATA "/hostname");
  cr_assert_str_eq (c->mounts[5].options[0], "bind");
  cr_assert_str_eq (c->mounts[5].options[1], "rprivate");
  cr_assert_str_eq (c->mounts[9].destination, "/data");
  cr_assert_null (c->mounts[9].type);
  cr_assert_str_eq (c->mounts[9].source, "/home/u/data");
  cr_assert_eq (c->mounts[9].n_options, 3);
  cr_assert_str_eq (c->mounts[9].options[0], "rbind");
  cr_assert_str_eq (c->mounts[10].destination, "/sys/fs/cgroup");
  cr_assert_str_eq (c->mounts[10].options[5], "ro");

  /* hooks */
  cr_assert_eq (c->n_hooks[OCI_HOOK_PRESTART], 1);
  const struct oci_hook *h = &c->hooks[OCI_HOOK_PRESTART][0];
  cr_assert_str_eq (h->path, "/usr/bin/nvidia-container-toolkit");
  cr_assert_eq (h->n_args, 2);
  cr_assert_str_eq (h->args[1], "prestart");
  cr_assert_null (h->args[2]);
  cr_assert_eq (h->n_env, 2);
  cr_assert_str_eq (h->env[1], "NVIDIA_VISIBLE_DEVICES=all");
  cr_assert_eq (h->timeout_s, 0);
  cr_assert_eq (c->n_hooks[OCI_HOOK_CREATE_RUNTIME], 2);
  h = &c->hooks[OCI_HOOK_CREATE_RUNTIME][0];
  cr_assert_str_eq (h->path, "/usr/libexec/oci/hooks.d/oci-systemd-hook");
  cr_assert_eq (h->timeout_s, 10);
  cr_assert_eq (h->n_args, 0);
  cr_assert_not_null (h->args);
  cr_assert_null (h->args[0]);
  cr_assert_not_null (h->env);
  cr_assert_null (h->env[0]);
  cr_assert_str_eq (c->hooks[OCI_HOOK_CREATE_RUNTIME][1].path, "/usr/local/bin/second");
  cr_assert_eq (c->n_hooks[OCI_HOOK_CREATE_CONTAINER], 1);
  cr_assert_str_eq (c->hooks[OCI_HOOK_CREATE_CONTAINER][0].args[1], "-v");
  cr_assert_eq (c->n_hooks[OCI_HOOK_START_CONTAINER], 1);
  cr_assert_str_eq (c->hooks[OCI_HOOK_START_CONTAINER][0].path, "/sbin/ldconfig");
  cr_assert_eq (c->n_hooks[OCI_HOOK_POSTSTART], 0);
  cr_assert_eq (c->n_hooks[OCI_HOOK_POSTSTOP], 1);
  h = &c->hooks[OCI_HOOK_POSTSTOP][0];
  cr_assert_eq (h->timeout_s, 30);
  cr_assert_eq (h->n_args, 6);
  cr_assert_str_eq (h->args[5], CTR_ID);

  /* annotations */
  cr_assert_eq (c->n_annotations, 5);
  cr_assert_str_eq (oci_config_annotation (c, "io.container.manager"), "libpod");
  cr_assert_str_eq (oci_config_annotation (c, "org.opencontainers.image.stopSignal"), "15");
  cr_assert_str_eq (oci_config_annotation (c, "io.podman.annotations.empty"), "");
  cr_assert_null (oci_config_annotation (c, "io.container"));
  cr_assert_str_eq (c->annotation_keys[1], "io.kubernetes.cri-o.Created");
  cr_assert_str_eq (c->annotation_values[1], "2023-01-15T10:20:30.123456789Z");

  /* linux */
  cr_assert_eq (c->n_sysctl, 2);
  cr_assert_str_eq (c->sysctl_keys[0], "net.ipv4.ping_group_range");
  cr_assert_str_eq (c->sysctl_values[0], "0 0");
  cr_assert_str_eq (c->sysctl_keys[1], "net.ipv4.ip_unprivileged_port_start");
  cr_assert_str_eq (c->sysctl_values[1], "0");
  cr_assert (c->resources.has_memory_limit);
  cr_assert_eq (c->resources.memory_limit, 536870912);
  cr_assert (c->resources.has_memory_swap);
  cr_assert_eq (c->resources.memory_swap, 1073741824);
  cr_assert (c->resources.has_pids_limit);
  cr_assert_eq (c->resources.pids_limit, 2048);
  cr_assert (c->resources.has_cpu_shares);
  cr_assert_eq (c->resources.cpu_shares, 512);
  cr_assert (c->resources.has_cpu_quota);
  cr_assert_eq (c->resources.cpu_quota, 50000);
  cr_assert (c->resources.has_cpu_period);
  cr_assert_eq (c->resources.cpu_period, 100000);
  cr_assert_str_eq (c->resources.cpu_cpus, "0-1");
  cr_assert_str_eq (c->resources.cpu_mems, "0");
  cr_assert_str_eq (c->cgroups_path, "user.slice:libpod:" CTR_ID);

  cr_assert_eq (c->n_namespaces, 8);
  static const int flags[] = { CLONE_NEWPID, CLONE_NEWNET,    CLONE_NEWIPC,  CLONE_NEWUTS,
                               CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUSER, CLONE_NEWTIME };
  for (size_t i = 0; i < 8; i++)
    cr_assert_eq (c->namespaces[i].flag, flags[i], "namespace %zu", i);
  cr_assert_str_eq (c->namespaces[1].path, "/run/user/1000/netns/netns-1d2c3b4a");
  cr_assert_null (c->namespaces[0].path);
  cr_assert_null (c->namespaces[7].path, "an empty path means a new namespace");
  const char *p = "x";
  cr_assert (oci_config_has_namespace (c, CLONE_NEWNET, &p));
  cr_assert_str_eq (p, "/run/user/1000/netns/netns-1d2c3b4a");
  cr_assert (oci_config_has_namespace (c, CLONE_NEWUSER, &p));
  cr_assert_null (p);
  cr_assert (oci_config_has_namespace (c, CLONE_NEWPID, NULL));

  cr_assert_eq (c->n_uid_mappings, 2);
  cr_assert_eq (c->uid_mappings[0].container_id, 0);
  cr_assert_eq (c->uid_mappings[0].host_id, 1000);
  cr_assert_eq (c->uid_mappings[0].size, 1);
  cr_assert_eq (c->uid_mappings[1].container_id, 1);
  cr_assert_eq (c->uid_mappings[1].host_id, 100000);
  cr_assert_eq (c->uid_mappings[1].size, 65536);
  cr_assert_eq (c->n_gid_mappings, 2);
  cr_assert_eq (c->gid_mappings[1].host_id, 100000);

  cr_assert_str_eq (
      c->seccomp_json,
      "{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,"
      "\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],"
      "\"syscalls\":[{\"names\":[\"read\",\"write\",\"exit_group\"],\"action\":\"SCMP_ACT_ALLOW\"},"
      "{\"names\":[\"clone\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[{\"index\":0,"
      "\"value\":2114060288,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]},"
      "{\"names\":[\"personality\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":1,"
      "\"comment\":\"a/b \\\\u00e9 \xc3\xa9\",\"includes\":{},\"excludes\":{\"caps\":null},"
      "\"flag\":true,\"ratio\":-1.5e3}]}");

  cr_assert_eq (c->n_masked_paths, 11);
  cr_assert_str_eq (c->masked_paths[10], "/sys/dev/block");
  cr_assert_null (c->masked_paths[11]);
  cr_assert_eq (c->n_readonly_paths, 6);
  cr_assert_str_eq (c->readonly_paths[5], "/proc/sysrq-trigger");

  cr_assert_eq (c->n_devices, 4);
  const struct oci_device *d = &c->devices[0];
  cr_assert_eq (d->type, 'c');
  cr_assert_str_eq (d->path, "/dev/fuse");
  cr_assert_eq (d->major, 10);
  cr_assert_eq (d->minor, 229);
  cr_assert (d->has_file_mode);
  cr_assert_eq (d->file_mode, 0666);
  cr_assert (d->has_uid);
  cr_assert (d->has_gid);
  cr_assert_eq (d->uid, 0);
  d = &c->devices[1];
  cr_assert_eq (d->type, 'b');
  cr_assert_eq (d->major, 8);
  cr_assert_not (d->has_file_mode);
  cr_assert_not (d->has_uid);
  d = &c->devices[2];
  cr_assert_eq (d->type, 'u');
  cr_assert_eq (d->file_mode, 0644);
  cr_assert (d->has_uid);
  cr_assert_eq (d->uid, 1000);
  cr_assert_not (d->has_gid);
  cr_assert_eq (c->devices[3].type, 'p');

  cr_assert_str_eq (c->rootfs_propagation, "rslave");
  cr_assert_str_eq (c->mount_label, "system_u:object_r:container_file_t:s0:c123,c456");
}

Test (oci_config, podman_config_every_field)
{
  struct oci_config c;
  parse_ok (podman_config, &c);
  check_podman (&c);
  oci_config_release (&c);
  cr_assert_null (c.oci_version);
  cr_assert_eq (c.n_mounts, 0);
  oci_config_release (&c); /* twice is harmless */
}

Test (oci_config, load_reads_a_file)
{
  char *dir = make_tmpdir ();
  char *json = dq (podman_config);
  char *path = write_file (dir, "config.json", json, strlen (json));
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_load (path, &c, &e), 0, "%s", e ? csr_error_text (e) : "");
  check_podman (&c);
  oci_config_release (&c);
  unlink (path);
  rmdir (dir);
  free (path);
  free (json);
  free (dir);
}

/* ------------------------------------------------------- defaults */

static void
check_default (const struct oci_config *c, bool rootless)
{
  cr_assert_str_eq (c->oci_version, "1.0.2");
  cr_assert_str_eq (c->root_path, "rootfs");
  cr_assert (c->root_readonly);
  cr_assert (c->has_process);
  cr_assert (c->terminal);
  cr_assert_eq (c->uid, 0);
  cr_assert_eq (c->gid, 0);
  cr_assert_eq (c->n_args, 1);
  cr_assert_str_eq (c->args[0], "sh");
  cr_assert_eq (c->n_env, 2);
  cr_assert_str_eq (c->env[0], "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  cr_assert_str_eq (c->env[1], "TERM=xterm");
  cr_assert_str_eq (c->cwd, "/");
  uint64_t caps = (1ULL << CAP_AUDIT_WRITE) | (1ULL << CAP_KILL) | (1ULL << CAP_NET_BIND_SERVICE);
  cr_assert (c->has_caps);
  cr_assert_eq (c->caps.bounding, caps);
  cr_assert_eq (c->caps.effective, caps);
  cr_assert_eq (c->caps.permitted, caps);
  cr_assert_eq (c->caps.inheritable, 0);
  cr_assert_eq (c->caps.ambient, 0);
  cr_assert_eq (c->n_rlimits, 1);
  cr_assert_eq (c->rlimits[0].resource, RLIMIT_NOFILE);
  cr_assert_eq (c->rlimits[0].soft, 1024);
  cr_assert_eq (c->rlimits[0].hard, 1024);
  cr_assert (c->no_new_privileges);
  cr_assert_str_eq (c->hostname, "csrun");
  cr_assert_eq (c->n_masked_paths, 12);
  cr_assert_str_eq (c->masked_paths[0], "/proc/acpi");
  cr_assert_str_eq (c->masked_paths[2], "/proc/interrupts");
  cr_assert_str_eq (c->masked_paths[9], "/sys/devices/virtual/powercap");
  cr_assert_str_eq (c->masked_paths[11], "/proc/scsi");
  cr_assert_eq (c->n_readonly_paths, 5);
  cr_assert_str_eq (c->readonly_paths[4], "/proc/sysrq-trigger");

  cr_assert (oci_config_has_namespace (c, CLONE_NEWPID, NULL));
  cr_assert (oci_config_has_namespace (c, CLONE_NEWNET, NULL));
  cr_assert (oci_config_has_namespace (c, CLONE_NEWIPC, NULL));
  cr_assert (oci_config_has_namespace (c, CLONE_NEWUTS, NULL));
  cr_assert (oci_config_has_namespace (c, CLONE_NEWNS, NULL));
  /* cgroup: on a cgroup v2 host only (crun's rule; runc's spec has none). */
  struct statfs sfs;
  bool v2 = statfs ("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
  cr_assert_eq (oci_config_has_namespace (c, CLONE_NEWCGROUP, NULL), v2);
  cr_assert_eq (oci_config_has_namespace (c, CLONE_NEWUSER, NULL), rootless);
  cr_assert_not (oci_config_has_namespace (c, CLONE_NEWTIME, NULL));
  cr_assert_eq (c->n_namespaces, (size_t)(5 + v2 + rootless));

  cr_assert_str_eq (c->mounts[0].destination, "/proc");
  cr_assert_eq (c->mounts[0].n_options, 0);
  cr_assert_not_null (c->mounts[0].options);
  cr_assert_str_eq (c->mounts[1].destination, "/dev");
  cr_assert_str_eq (c->mounts[1].options[2], "mode=755");
  cr_assert_str_eq (c->mounts[2].destination, "/dev/pts");
  cr_assert_str_eq (c->mounts[2].type, "devpts");
  bool has_gid5 = false;
  for (size_t i = 0; i < c->mounts[2].n_options; i++)
    has_gid5 |= strcmp (c->mounts[2].options[i], "gid=5") == 0;
  cr_assert_eq (has_gid5, !rootless);
  cr_assert_eq (c->mounts[2].n_options, rootless ? 5 : 6);
  cr_assert_str_eq (c->mounts[3].destination, "/dev/shm");
  cr_assert_str_eq (c->mounts[3].source, "shm");
  cr_assert_str_eq (c->mounts[4].destination, "/dev/mqueue");
  cr_assert_str_eq (c->mounts[5].destination, "/sys");
}

Test (oci_config, default_spec_round_trips)
{
  char *json = oci_config_default_json (false, 1000, 1000);
  cr_assert_not_null (json);
  static const char prefix[]
      = "{\n  \"ociVersion\": \"1.0.2\",\n  \"process\": {\n    \"terminal\": true,\n";
  cr_assert_eq (strncmp (json, prefix, strlen (prefix)), 0, "two-space indent expected:\n%s", json);
  cr_assert_eq (json[strlen (json) - 1], '\n');
  cr_assert_neq (json[strlen (json) - 2], '\n');
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_parse (json, strlen (json), &c, &e), 0, "%s",
                e ? csr_error_text (e) : "");
  check_default (&c, false);
  cr_assert_eq (c.n_mounts, 7);
  cr_assert_str_eq (c.mounts[5].type, "sysfs");
  cr_assert_str_eq (c.mounts[6].destination, "/sys/fs/cgroup");
  cr_assert_str_eq (c.mounts[6].type, "cgroup");
  cr_assert_eq (c.n_uid_mappings, 0);
  cr_assert_not_null (strstr (json, "\"resources\": {\n      \"devices\": [\n        {\n"
                                    "          \"allow\": false,\n          \"access\": \"rwm\""));
  oci_config_release (&c);
  free (json);
}

Test (oci_config, default_rootless_spec_round_trips)
{
  char *json = oci_config_default_json (true, 1234, 5678);
  cr_assert_not_null (json);
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_parse (json, strlen (json), &c, &e), 0, "%s",
                e ? csr_error_text (e) : "");
  check_default (&c, true);
  cr_assert_eq (c.n_mounts, 6, "no cgroup mount");
  cr_assert_str_eq (c.mounts[5].type, "none");
  cr_assert_str_eq (c.mounts[5].source, "/sys");
  cr_assert_eq (c.mounts[5].n_options, 5);
  cr_assert_str_eq (c.mounts[5].options[0], "rbind");
  cr_assert_str_eq (c.mounts[5].options[4], "ro");
  cr_assert_eq (c.n_uid_mappings, 1);
  cr_assert_eq (c.uid_mappings[0].container_id, 0);
  cr_assert_eq (c.uid_mappings[0].host_id, 1234);
  cr_assert_eq (c.uid_mappings[0].size, 1);
  cr_assert_eq (c.n_gid_mappings, 1);
  cr_assert_eq (c.gid_mappings[0].host_id, 5678);
  cr_assert_null (strstr (json, "resources"), "no device cgroup rule when rootless");
  cr_assert_null (strstr (json, "gid=5"));
  oci_config_release (&c);
  free (json);
}

/* ------------------------------------------------- malformed and edge inputs */

/* Arrays, not pointers: criterion may run each case in a fresh process image,
 * where pointers into the parent's data would not be valid. */
struct bad_case
{
  char json[320]; /* ' stands for " */
  char expect[128];
};

#define HEAD "{'ociVersion':'1.0.2','root':{'path':'rootfs'}"
#define PROC "'process':{'cwd':'/','args':['sh']"

ParameterizedTestParameters (oci_config, malformed)
{
  static struct bad_case cases[] = {
    { "not json", "invalid JSON: lexical error" },
    { "", "invalid JSON: parse error: premature EOF" },
    { "{'ociVersion':'1.0.2',", "invalid JSON: parse error: premature EOF" },
    { HEAD "} {}", "invalid JSON: parse error: trailing garbage" },
    { HEAD ",}", "invalid JSON" },
    { "[1,2]", "expected a JSON object at the top level, got an array" },
    { "'1.0.2'", "expected a JSON object at the top level, got a string" },
    { "{'root':{'path':'rootfs'}}", "ociVersion: required field is missing" },
    { "{'ociVersion':'2.0.0','root':{'path':'rootfs'}}",
      "ociVersion: unsupported version '2.0.0' (expected 1.x)" },
    { "{'ociVersion':'1','root':{'path':'rootfs'}}", "ociVersion: unsupported version '1'" },
    { "{'ociVersion':1.0,'root':{'path':'rootfs'}}",
      "ociVersion: expected a string, got a number" },
    { "{'ociVersion':'1.0.2'}", "root: required field is missing" },
    { "{'ociVersion':'1.0.2','root':'rootfs'}", "root: expected an object, got a string" },
    { "{'ociVersion':'1.0.2','root':{'readonly':true}}", "root.path: required field is missing" },
    { "{'ociVersion':'1.0.2','root':{'path':''}}", "root.path: must not be empty" },
    { "{'ociVersion':'1.0.2','root':{'path':'r','readonly':'yes'}}",
      "root.readonly: expected a boolean, got a string" },
    { HEAD ",'hostname':5}", "hostname: expected a string, got a number" },
    { HEAD ",'domainname':['a']}", "domainname: expected a string, got an array" },
    /* mounts */
    { HEAD ",'mounts':{}}", "mounts: expected an array, got an object" },
    { HEAD ",'mounts':['/proc']}", "mounts[0]: expected an object, got a string" },
    { HEAD ",'mounts':[{'destination':'/a'},{'type':'tmpfs','source':'tmpfs'}]}",
      "mounts[1].destination: required field is missing" },
    { HEAD ",'mounts':[{'destination':''}]}", "mounts[0].destination: must not be empty" },
    { HEAD ",'mounts':[{'destination':'/a','options':['ro',1]}]}",
      "mounts[0].options[1]: expected a string, got a number" },
    { HEAD ",'mounts':[{'destination':'/a','options':'ro'}]}",
      "mounts[0].options: expected an array of strings, got a string" },
    { HEAD ",'mounts':[{'destination':'/a','type':false}]}",
      "mounts[0].type: expected a string, got a boolean" },
    /* process */
    { HEAD ",'process':[]}", "process: expected an object, got an array" },
    { HEAD ",'process':{'cwd':'/'}}", "process.args: required field is missing" },
    { HEAD ",'process':{'cwd':'/','args':null}}",
      "process.args: expected an array of strings, got null" },
    { HEAD ",'process':{'cwd':'/','args':[]}}", "process.args: must contain at least one element" },
    { HEAD ",'process':{'cwd':'/','args':['']}}", "process.args[0]: must not be empty" },
    { HEAD ",'process':{'cwd':'/','args':['sh',2]}}",
      "process.args[1]: expected a string, got a number" },
    { HEAD ",'process':{'args':['sh']}}", "process.cwd: required field is missing" },
    { HEAD ",'process':{'cwd':'tmp','args':['sh']}}",
      "process.cwd: expected an absolute path, got 'tmp'" },
    { HEAD "," PROC ",'terminal':'yes'}}", "process.terminal: expected a boolean, got a string" },
    { HEAD "," PROC ",'env':['A=1','FOO']}}", "process.env[1]: expected KEY=VALUE, got 'FOO'" },
    { HEAD "," PROC ",'env':['=x']}}", "process.env[0]: expected KEY=VALUE, got '=x'" },
    { HEAD "," PROC ",'user':{'uid':-1,'gid':0}}}",
      "process.user.uid: expected an unsigned integer, got -1" },
    { HEAD "," PROC ",'user':{'uid':4294967296,'gid':0}}}",
      "process.user.uid: 4294967296 is out of range (0 to 4294967294)" },
    { HEAD "," PROC ",'user':{'uid':4294967295,'gid':0}}}",
      "process.user.uid: 4294967295 is out of range (0 to 4294967294)" },
    { HEAD "," PROC ",'user':{'uid':0,'gid':1.5}}}",
      "process.user.gid: expected an unsigned integer, got 1.5" },
    { HEAD "," PROC ",'user':{'uid':0,'gid':1e3}}}",
      "process.user.gid: expected an unsigned integer, got 1e3" },
    { HEAD "," PROC ",'user':{'uid':'0','gid':0}}}",
      "process.user.uid: expected an unsigned integer, got a string" },
    { HEAD "," PROC ",'user':{'gid':0}}}", "process.user.uid: required field is missing" },
    { HEAD "," PROC ",'user':{'uid':0,'gid':0,'additionalGids':[1,'2']}}}",
      "process.user.additionalGids[1]: expected an unsigned integer, got a string" },
    { HEAD "," PROC ",'user':{'uid':0,'gid':0,'umask':-18}}}",
      "process.user.umask: expected an unsigned integer, got -18" },
    { HEAD "," PROC ",'consoleSize':{'height':24}}}",
      "process.consoleSize.width: required field is missing" },
    { HEAD "," PROC ",'consoleSize':{'height':24,'width':70000}}}",
      "process.consoleSize.width: 70000 is out of range (0 to 65535)" },
    { HEAD "," PROC ",'capabilities':['CAP_KILL']}}",
      "process.capabilities: expected an object, got an array" },
    { HEAD "," PROC ",'capabilities':{'effective':'CAP_KILL'}}}",
      "process.capabilities.effective: expected an array of strings, got a string" },
    { HEAD "," PROC ",'capabilities':{'permitted':[5]}}}",
      "process.capabilities.permitted[0]: expected a string, got a number" },
    { HEAD "," PROC ",'rlimits':[{'type':'RLIMIT_FOO','soft':1,'hard':1}]}}",
      "process.rlimits[0].type: unknown rlimit 'RLIMIT_FOO'" },
    { HEAD "," PROC ",'rlimits':[{'type':'RLIMIT_NOFILE','soft':1,'hard':1},"
           "{'type':'RLIMIT_NOFILE','soft':2,'hard':2}]}}",
      "process.rlimits[1].type: duplicate rlimit 'RLIMIT_NOFILE'" },
    { HEAD "," PROC ",'rlimits':[{'type':'RLIMIT_NOFILE','soft':2048,'hard':1024}]}}",
      "process.rlimits[0]: soft limit 2048 is above the hard limit 1024" },
    { HEAD "," PROC ",'rlimits':[{'type':'RLIMIT_CORE','soft':0}]}}",
      "process.rlimits[0].hard: required field is missing" },
    { HEAD "," PROC ",'rlimits':[{'type':'RLIMIT_CORE','soft':18446744073709551616,'hard':0}]}}",
      "process.rlimits[0].soft: 18446744073709551616 is out of range (0 to "
      "18446744073709551615)" },
    { HEAD "," PROC ",'rlimits':{'RLIMIT_CORE':1}}}",
      "process.rlimits: expected an array, got an object" },
    { HEAD "," PROC ",'oomScoreAdj':1001}}",
      "process.oomScoreAdj: 1001 is out of range (-1000 to 1000)" },
    { HEAD "," PROC ",'noNewPrivileges':1}}",
      "process.noNewPrivileges: expected a boolean, got a number" },
    { HEAD "," PROC ",'apparmorProfile':{}}}",
      "process.apparmorProfile: expected a string, got an object" },
    /* hooks */
    { HEAD ",'hooks':[]}", "hooks: expected an object, got an array" },
    { HEAD ",'hooks':{'prestart':[{'args':['x']}]}}",
      "hooks.prestart[0].path: required field is missing" },
    { HEAD ",'hooks':{'poststop':[{'path':'/bin/true'},{'path':'bin/true'}]}}",
      "hooks.poststop[1].path: expected an absolute path, got 'bin/true'" },
    { HEAD ",'hooks':{'createRuntime':[{'path':'/bin/true','timeout':0}]}}",
      "hooks.createRuntime[0].timeout: must be greater than zero, got 0" },
    { HEAD ",'hooks':{'startContainer':[{'path':'/bin/true','timeout':99999999999}]}}",
      "hooks.startContainer[0].timeout: 99999999999 is out of range (1 to 2147483647)" },
    { HEAD ",'hooks':{'createContainer':[{'path':'/bin/true','env':['NOEQUALS']}]}}",
      "hooks.createContainer[0].env[0]: expected KEY=VALUE, got 'NOEQUALS'" },
    { HEAD ",'hooks':{'poststart':{'path':'/bin/true'}}}",
      "hooks.poststart: expected an array, got an object" },
    /* annotations */
    { HEAD ",'annotations':{'com.example.n':3}}",
      "annotations.com.example.n: expected a string, got a number" },
    { HEAD ",'annotations':{'':'x'}}", "annotations: keys must not be empty" },
    { HEAD ",'annotations':['a=b']}", "annotations: expected an object of strings, got an array" },
    /* linux */
    { HEAD ",'linux':[]}", "linux: expected an object, got an array" },
    { HEAD ",'linux':{'namespaces':[{'type':'pid'},{'type':'foo'}]}}",
      "linux.namespaces[1].type: unknown namespace type 'foo'" },
    { HEAD ",'linux':{'namespaces':[{'type':'pid'},{'type':'ipc'},{'type':'pid'}]}}",
      "linux.namespaces[2].type: duplicate namespace 'pid'" },
    { HEAD ",'linux':{'namespaces':[{'path':'/proc/1/ns/net'}]}}",
      "linux.namespaces[0].type: required field is missing" },
    { HEAD ",'linux':{'namespaces':[{'type':'network','path':'netns'}]}}",
      "linux.namespaces[0].path: expected an absolute path, got 'netns'" },
    { HEAD ",'linux':{'namespaces':[{'type':'mo\\nt\\u0001'}]}}",
      "linux.namespaces[0].type: unknown namespace type 'mo\\nt\\x01'" },
    { HEAD ",'annotations':{'a\\tb':5}}", "annotations.a\\tb: expected a string, got a number" },
    { HEAD ",'linux':{'namespaces':'pid'}}", "linux.namespaces: expected an array, got a string" },
    { HEAD ",'linux':{'uidMappings':[{'containerID':0,'hostID':1000,'size':'1'}]}}",
      "linux.uidMappings[0].size: expected an unsigned integer, got a string" },
    { HEAD ",'linux':{'uidMappings':[{'containerID':0,'hostID':1000,'size':-1}]}}",
      "linux.uidMappings[0].size: expected an unsigned integer, got -1" },
    { HEAD ",'linux':{'gidMappings':[{'containerID':0,'size':1}]}}",
      "linux.gidMappings[0].hostID: required field is missing" },
    { HEAD ",'linux':{'gidMappings':[{'containerID':4294967296,'hostID':0,'size':1}]}}",
      "linux.gidMappings[0].containerID: 4294967296 is out of range (0 to 4294967295)" },
    { HEAD ",'linux':{'sysctl':{'net.ipv4.ip_forward':true}}}",
      "linux.sysctl.net.ipv4.ip_forward: expected a string, got a boolean" },
    { HEAD ",'linux':{'resources':{'memory':{'limit':-2}}}}",
      "linux.resources.memory.limit: -2 is out of range (-1 to 9223372036854775807)" },
    { HEAD ",'linux':{'resources':{'memory':{'swap':9223372036854775808}}}}",
      "linux.resources.memory.swap: 9223372036854775808 is out of range" },
    { HEAD ",'linux':{'resources':{'memory':{'limit':1e400}}}}",
      "linux.resources.memory.limit: expected an integer, got 1e400" },
    { HEAD ",'linux':{'resources':{'memory':{'limit':'1g'}}}}",
      "linux.resources.memory.limit: expected an integer, got a string" },
    { HEAD ",'linux':{'resources':{'pids':{}}}}",
      "linux.resources.pids.limit: required field is missing" },
    { HEAD ",'linux':{'resources':{'cpu':{'shares':-5}}}}",
      "linux.resources.cpu.shares: expected an unsigned integer, got -5" },
    { HEAD ",'linux':{'resources':{'cpu':{'cpus':3}}}}",
      "linux.resources.cpu.cpus: expected a string, got a number" },
    { HEAD ",'linux':{'resources':{'devices':[{'access':'rwm'}]}}}",
      "linux.resources.devices[0].allow: required field is missing" },
    { HEAD ",'linux':{'resources':{'devices':[{'allow':false,'access':'xa'}]}}}",
      "linux.resources.devices[0].access: expected a combination of 'r', 'w' and 'm', got 'xa'" },
    { HEAD ",'linux':{'devices':[{'path':'/dev/x','type':'x','major':1,'minor':1}]}}",
      "linux.devices[0].type: unknown device type 'x'" },
    { HEAD ",'linux':{'devices':[{'path':'/dev/x','type':'c','minor':1}]}}",
      "linux.devices[0].major: required field is missing" },
    { HEAD ",'linux':{'devices':[{'path':'dev/null','type':'c','major':1,'minor':3}]}}",
      "linux.devices[0].path: expected an absolute path, got 'dev/null'" },
    { HEAD ",'linux':{'devices':[{'path':'/dev/null','type':'c','major':1,'minor':3,'uid':-1}]}}",
      "linux.devices[0].uid: expected an unsigned integer, got -1" },
    { HEAD ",'linux':{'seccomp':[]}}", "linux.seccomp: expected an object, got an array" },
    { HEAD ",'linux':{'rootfsPropagation':'sideways'}}",
      "linux.rootfsPropagation: unknown propagation 'sideways'" },
    { HEAD ",'linux':{'maskedPaths':['proc/kcore']}}",
      "linux.maskedPaths[0]: expected an absolute path, got 'proc/kcore'" },
    { HEAD ",'linux':{'readonlyPaths':[null]}}",
      "linux.readonlyPaths[0]: expected a string, got null" },
    { HEAD ",'linux':{'cgroupsPath':true}}",
      "linux.cgroupsPath: expected a string, got a boolean" },
    { HEAD ",'linux':{'mountLabel':7}}", "linux.mountLabel: expected a string, got a number" },
    /* JSON-level */
    { HEAD "," PROC ",'user':{'uid':0,'gid':0,'uid':1000}}}", "process.user: duplicate key 'uid'" },
    { HEAD ",'windows':{'a':1,'a':2}}", "windows: duplicate key 'a'" },
    { HEAD "} // trailing comment", "invalid JSON: comment at offset" },
    { HEAD ",'hostname':'a\\u0000b'}", "invalid JSON: string with a \\u0000 escape" },
    { HEAD ",'hostname':'\xff\xfe'}", "invalid JSON: lexical error: invalid bytes in UTF8 string" },
  };
  return cr_make_param_array (struct bad_case, cases, sizeof cases / sizeof cases[0]);
}

ParameterizedTest (struct bad_case *bc, oci_config, malformed)
{
  char *json = dq (bc->json);
  parse_fails (json, strlen (json), bc->expect);
  free (json);
}

Test (oci_config, nul_byte_is_refused)
{
  static const char json[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"}}\0garbage";
  parse_fails (json, sizeof json - 1, "invalid JSON: NUL byte at offset 42");
}

Test (oci_config, deep_nesting_is_refused)
{
  size_t depth = 200;
  char *json = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&json, &len);
  cr_assert_not_null (f);
  fputs ("{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"},\"vendor\":", f);
  for (size_t i = 0; i < depth; i++)
    fputc ('[', f);
  for (size_t i = 0; i < depth; i++)
    fputc (']', f);
  fputc ('}', f);
  fclose (f);
  parse_fails (json, len, "invalid JSON: nested deeper than 64 levels");
  free (json);
}

/* Fields csrun doesn't know (other platforms, newer spec versions, vendor
 * extensions) are ignored whatever their shape. */
/* crun ignores capability names it does not know (a config for a newer
 * kernel); so does csrun, counting them for create's warning. */
Test (oci_config, unknown_capabilities_are_ignored)
{
  struct oci_config c;
  parse_ok (HEAD ",'process':{'cwd':'/','args':['sh'],'capabilities':{"
                 "'bounding':['CAP_KILL','CAP_FOO'],'ambient':['cap_kill'],"
                 "'effective':['UNKNOWN_CAP']}}}",
            &c);
  cr_assert_eq (c.caps.bounding, 1ULL << CAP_KILL);
  cr_assert_eq (c.caps.ambient, 0);
  cr_assert_eq (c.caps.effective, 0);
  cr_assert_eq (c.n_unknown_caps, 3);
  cr_assert_str_eq (c.unknown_cap, "CAP_FOO");
  oci_config_release (&c);
}

Test (oci_config, unknown_fields_are_ignored)
{
  struct oci_config c;
  parse_ok (HEAD ",'windows':{'layerFolders':['C:\\\\x'],'hyperv':{'x':[1,{'y':null}]}},"
                 "'solaris':[1,2,3],'vm':{'kernel':{'path':5}},'zos':null,"
                 "'x-vendor':[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{'deep':[true,false,null,1.5e300]}]"
                 "]]]]]]]]]]]]]]]]]]]]]]]]]]]]],"
                 "'process':{'cwd':'/','args':['sh'],'ioPriority':{'class':7},"
                 "'scheduler':'fifo','execCPUAffinity':[],'commandLine':false,"
                 "'user':{'uid':1,'gid':2,'username':{'nested':'garbage'}},"
                 "'capabilities':{'bounding':[],'future':[1,2]}},"
                 "'hooks':{'prestop':42,'prestart':[{'path':'/x','unknown':{}}]},"
                 "'linux':{'intelRdt':{'closID':5},'personality':'weird','timeOffsets':[],"
                 "'memoryPolicy':7,'netDevices':{'eth0':{}},"
                 "'resources':{'memory':{'kernel':'nonsense','swappiness':-3},"
                 "'cpu':{'realtimeRuntime':'x','idle':[]},'rdma':0,'network':null},"
                 "'seccomp':{'defaultAction':'SCMP_ACT_ALLOW'}},"
                 "'mounts':[{'destination':'/x','uidMappings':'whatever'}]}",
            &c);
  cr_assert_eq (c.uid, 1);
  cr_assert_eq (c.gid, 2);
  cr_assert (c.has_caps);
  cr_assert_eq (c.caps.bounding, 0);
  cr_assert_eq (c.n_hooks[OCI_HOOK_PRESTART], 1);
  cr_assert_str_eq (c.seccomp_json, "{\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
  cr_assert_not (c.resources.has_memory_limit);
  cr_assert_not (c.resources.has_cpu_quota);
  oci_config_release (&c);
}

Test (oci_config, minimal_and_edge_values_are_accepted)
{
  struct oci_config c;
  /* No process: only valid for `spec` round trips, but parses. */
  parse_ok ("{'ociVersion':'1.2.0','root':{'path':'rootfs'}}", &c);
  cr_assert_not (c.has_process);
  cr_assert_null (c.args);
  cr_assert_null (c.hostname);
  cr_assert_null (c.seccomp_json);
  cr_assert_eq (c.n_mounts, 0);
  cr_assert_not (oci_config_has_namespace (&c, CLONE_NEWPID, NULL));
  cr_assert_null (oci_config_annotation (&c, "x"));
  oci_config_release (&c);

  parse_ok (HEAD
            ",'hostname':null,'annotations':{},"
            "'process':{'cwd':'/','args':['sh'],'env':null,'terminal':false,"
            "'user':{'uid':4294967294,'gid':0,'umask':0},'oomScoreAdj':-1000,"
            "'rlimits':[{'type':'RLIMIT_AS','soft':18446744073709551615,"
            "'hard':18446744073709551615}]},"
            "'mounts':[{'destination':'tmp','type':'tmpfs'}],"
            "'linux':{'namespaces':[{'type':'network','path':''}],"
            "'resources':{'memory':{'limit':-1,'swap':-1},'pids':{'limit':-1},"
            "'cpu':{'quota':-1,'period':18446744073709551615}},"
            "'devices':[{'path':'/dev/fifo','type':'p'}],"
            "'uidMappings':[{'containerID':4294967295,'hostID':4294967295,'size':4294967295}]}}",
            &c);
  cr_assert_null (c.hostname);
  cr_assert_eq (c.n_annotations, 0);
  cr_assert_eq (c.n_env, 0);
  cr_assert_not_null (c.env, "env is an empty vector when absent");
  cr_assert_null (c.env[0]);
  cr_assert_eq (c.uid, 4294967294u);
  cr_assert (c.has_umask);
  cr_assert_eq (c.umask, 0);
  cr_assert_eq (c.oom_score_adj, -1000);
  cr_assert_not (c.has_console_size);
  cr_assert_eq (c.rlimits[0].resource, RLIMIT_AS);
  cr_assert_eq (c.rlimits[0].soft, UINT64_MAX);
  cr_assert_str_eq (c.mounts[0].destination, "/tmp", "relative destinations are under /");
  cr_assert_null (c.mounts[0].source);
  cr_assert_not_null (c.mounts[0].options);
  cr_assert_null (c.namespaces[0].path);
  cr_assert_eq (c.resources.memory_limit, -1);
  cr_assert_eq (c.resources.memory_swap, -1);
  cr_assert_eq (c.resources.pids_limit, -1);
  cr_assert_eq (c.resources.cpu_quota, -1);
  cr_assert_eq (c.resources.cpu_period, UINT64_MAX);
  cr_assert_not (c.resources.has_cpu_shares);
  cr_assert_eq (c.devices[0].type, 'p');
  cr_assert_eq (c.uid_mappings[0].size, 4294967295u);
  oci_config_release (&c);
}

Test (oci_config, every_capability_and_rlimit_name)
{
  /* Cross-check the names against libcap's table. */
  for (int cap = 0; cap <= CAP_CHECKPOINT_RESTORE; cap++)
    {
      char *name = cap_to_name (cap);
      cr_assert_not_null (name);
      char upper[64];
      size_t i;
      for (i = 0; name[i] && i < sizeof upper - 1; i++)
        upper[i] = (char)toupper ((unsigned char)name[i]);
      upper[i] = '\0';
      cap_free (name);
      char *sq = NULL;
      cr_assert_geq (asprintf (&sq, HEAD "," PROC ",'capabilities':{'ambient':['%s']}}}", upper),
                     0);
      struct oci_config c;
      parse_ok (sq, &c);
      cr_assert_eq (c.caps.ambient, 1ULL << cap, "%s", upper);
      oci_config_release (&c);
      free (sq);
    }
  static const struct
  {
    const char *name;
    int resource;
  } rl[] = {
    { "AS", RLIMIT_AS },
    { "CORE", RLIMIT_CORE },
    { "CPU", RLIMIT_CPU },
    { "DATA", RLIMIT_DATA },
    { "FSIZE", RLIMIT_FSIZE },
    { "LOCKS", RLIMIT_LOCKS },
    { "MEMLOCK", RLIMIT_MEMLOCK },
    { "MSGQUEUE", RLIMIT_MSGQUEUE },
    { "NICE", RLIMIT_NICE },
    { "NOFILE", RLIMIT_NOFILE },
    { "NPROC", RLIMIT_NPROC },
    { "RSS", RLIMIT_RSS },
    { "RTPRIO", RLIMIT_RTPRIO },
    { "RTTIME", RLIMIT_RTTIME },
    { "SIGPENDING", RLIMIT_SIGPENDING },
    { "STACK", RLIMIT_STACK },
  };
  for (size_t i = 0; i < sizeof rl / sizeof rl[0]; i++)
    {
      char *sq = NULL;
      cr_assert_geq (
          asprintf (&sq, HEAD "," PROC ",'rlimits':[{'type':'RLIMIT_%s','soft':1,'hard':2}]}}",
                    rl[i].name),
          0);
      struct oci_config c;
      parse_ok (sq, &c);
      cr_assert_eq (c.rlimits[0].resource, rl[i].resource, "%s", rl[i].name);
      oci_config_release (&c);
      free (sq);
    }
}

Test (oci_config, hook_stage_names)
{
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_PRESTART), "prestart");
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_CREATE_RUNTIME), "createRuntime");
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_CREATE_CONTAINER), "createContainer");
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_START_CONTAINER), "startContainer");
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_POSTSTART), "poststart");
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_POSTSTOP), "poststop");
  cr_assert_str_eq (oci_hook_stage_name (OCI_HOOK_N), "unknown");
  cr_assert_str_eq (oci_hook_stage_name (-1), "unknown");
}

/* ------------------------------------------------------------- loading */

Test (oci_config, load_missing_file)
{
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_load ("/nonexistent-csrun/config.json", &c, &e), -1);
  cr_assert_not_null (e);
  cr_assert_eq (e->status, ENOENT);
  cr_assert_str_eq (csr_error_text (e),
                    "/nonexistent-csrun/config.json: No such file or directory");
  csr_error_free (e);
}

Test (oci_config, load_refuses_a_file_over_4_mib)
{
  char *dir = make_tmpdir ();
  /* Valid JSON padded with spaces: refused for its size alone. */
  size_t len = 5u << 20;
  char *big = malloc (len);
  cr_assert_not_null (big);
  memset (big, ' ', len);
  static const char doc[] = "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"r\"}}";
  memcpy (big, doc, sizeof doc - 1);
  char *path = write_file (dir, "config.json", big, len);
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_load (path, &c, &e), -1);
  const char *text = csr_error_text (e);
  cr_assert_eq (strncmp (text, path, strlen (path)), 0, "%s", text);
  cr_assert_not_null (strstr (text, ": larger than 4 MiB"), "%s", text);
  csr_error_freep (&e);

  /* Just under the limit is fine. */
  len = (4u << 20) - 1;
  unlink (path);
  free (path);
  path = write_file (dir, "config.json", big, len);
  cr_assert_eq (oci_config_load (path, &c, &e), 0, "%s", e ? csr_error_text (e) : "");
  cr_assert_str_eq (c.root_path, "r");
  oci_config_release (&c);

  unlink (path);
  rmdir (dir);
  free (path);
  free (big);
  free (dir);
}

Test (oci_config, load_prefixes_errors_with_the_path)
{
  char *dir = make_tmpdir ();
  char *json = dq (HEAD "," PROC ",'user':{'uid':-1,'gid':0}}}");
  char *path = write_file (dir, "config.json", json, strlen (json));
  struct oci_config c;
  csr_error *e = NULL;
  cr_assert_eq (oci_config_load (path, &c, &e), -1);
  char *want = NULL;
  cr_assert_geq (
      asprintf (&want, "%s: process.user.uid: expected an unsigned integer, got -1", path), 0);
  cr_assert_str_eq (csr_error_text (e), want);
  csr_error_freep (&e);

  /* A directory is not a config. */
  cr_assert_eq (oci_config_load (dir, &c, &e), -1);
  cr_assert_eq (e->status, EISDIR);
  csr_error_freep (&e);

  unlink (path);
  rmdir (dir);
  free (want);
  free (path);
  free (json);
  free (dir);
}

/* The byte checks, for other JSON documents read with yajl_tree (csrun
 * hook's state): a NUL byte or a \u0000 escape would cut a string short. */
Test (oci_config, prescan_for_other_documents)
{
  static const char ok_doc[] = "{\"id\": \"a\\\\u0000b\", \"x\": \"\\u0001\"}";
  csr_error *e = NULL;
  cr_assert_eq (csr_json_prescan (ok_doc, strlen (ok_doc), &e), 0, "%s",
                e ? csr_error_text (e) : "");
  static const char esc[] = "{\"id\": \"a\\u0000b\"}";
  cr_assert_lt (csr_json_prescan (esc, strlen (esc), &e), 0);
  cr_assert_not_null (strstr (e->msg, "\\u0000"), "%s", e->msg);
  csr_error_freep (&e);
  static const char byte[] = "{\"id\": \"a\0b\"}";
  cr_assert_lt (csr_json_prescan (byte, sizeof byte - 1, &e), 0);
  cr_assert_not_null (strstr (e->msg, "NUL"), "%s", e->msg);
  csr_error_freep (&e);
}

/* Device access letters in any order; letters other than r, w, m are
 * ignored as runc ignores them (its update.bats writes "rwa"). */
Test (oci_config, device_access_letters_as_runc)
{
  struct oci_config c;
  parse_ok (HEAD ",'linux':{'resources':{'devices':[{'allow':false,'access':'rwa'},"
                 "{'allow':true,'type':'c','major':1,'minor':3,'access':'wr'},"
                 "{'allow':true,'type':'b','major':8,'minor':0,'access':'mr'}]}}}",
            &c);
  cr_assert_eq (c.resources.n_devices, 3);
  cr_assert_eq (c.resources.devices[0].access, OCI_DEV_READ | OCI_DEV_WRITE);
  cr_assert_eq (c.resources.devices[1].access, OCI_DEV_READ | OCI_DEV_WRITE);
  cr_assert_eq (c.resources.devices[2].access, OCI_DEV_READ | OCI_DEV_MKNOD);
  cr_assert_not_null (c.resources.json, "the resources object is kept for the cgroup code");
  cr_assert_not_null (strstr (c.resources.json, "\"devices\""));
  oci_config_release (&c);
}

/* process.env: a later KEY= replaces an earlier one, in the earlier's stead
 * removed (runc's prepareEnv: the last wins, the order of the rest kept). */
Test (oci_config, env_last_entry_of_a_name_wins)
{
  struct oci_config c;
  parse_ok (HEAD ",'process':{'cwd':'/','args':['sh'],'env':['PATH=/a','FOO=1','PATHX=x',"
                 "'PATH=/b','FOO=','BAR=2','FOO=3'],'user':{'uid':0,'gid':0}}}",
            &c);
  cr_assert_eq (c.n_env, 4);
  cr_assert_str_eq (c.env[0], "PATHX=x");
  cr_assert_str_eq (c.env[1], "PATH=/b");
  cr_assert_str_eq (c.env[2], "BAR=2");
  cr_assert_str_eq (c.env[3], "FOO=3");
  cr_assert_null (c.env[4]);
  oci_config_release (&c);
}

/* process.terminal read without the rest of the config being valid. */
Test (oci_config, peek_terminal_ignores_other_errors)
{
  char path[] = "/tmp/csrun-test-peek.XXXXXX";
  int fd = mkstemp (path);
  cr_assert_geq (fd, 0);
  const char *doc = "{\"process\":{\"terminal\":true,\"args\":[\"/init\",0]}}";
  cr_assert_eq (write (fd, doc, strlen (doc)), (ssize_t)strlen (doc));
  close (fd);
  cr_assert (oci_config_peek_terminal (path));
  fd = open (path, O_WRONLY | O_TRUNC);
  cr_assert_geq (fd, 0);
  cr_assert_eq (write (fd, "{\"process\":{\"terminal\":1}}", 27), 27);
  close (fd);
  cr_assert_not (oci_config_peek_terminal (path));
  unlink (path);
  cr_assert_not (oci_config_peek_terminal (path));
}
