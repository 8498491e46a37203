/* csrun — create-time checks of an OCI config against the host (see
 * validate.h).  What the runtime spec leaves open is decided as runc and crun
 * do, and where they differ, the stricter way:
 *
 *  - sysctls: runc's libcontainer/configs/validate (sysctl()) and crun's
 *    validate_sysctl() accept the same keys: net.* with a network namespace,
 *    the eight kernel.{msg,sem,shm} keys and fs.mqueue.* with an IPC
 *    namespace, kernel.domainname with a UTS namespace; both refuse
 *    kernel.hostname (the hostname field) and everything else.  runc refuses
 *    a network namespace given by path that is the caller's own; csrun does
 *    so for every kind (a namespace joined by path that is the caller's is
 *    the host's, not the container's).
 *  - no mount namespace: crun chroots into the rootfs and makes no mounts
 *    there (libcrun_do_pivot_root; its mounts are made only with
 *    CLONE_NEWNS); runc refuses masked and read-only paths without one
 *    ("unable to restrict sys entries without a private MNT namespace").
 *    csrun chroots as crun does and refuses, as runc does, everything that
 *    would need a mount in the caller's mount namespace.
 *  - /dev: runc (needsSetupDev) and crun (mount_dev_from_host) skip their
 *    /dev set-up when /dev is a bind mount; csrun also makes devices only in
 *    a tmpfs it mounted at /dev itself.
 *  - apparmorProfile: runc writes it to /proc/self/attr/exec (EINVAL without
 *    AppArmor) and crun checks that AppArmor is enabled first; both refuse a
 *    profile on a host without AppArmor, and so does csrun. */
#include "config.h"
#include "validate.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/path.h"

#define SYSCTL_MAX 255

static const char *const ipc_kernel_keys[] = {
  "msgmax", "msgmnb", "msgmni", "sem", "shmall", "shmmax", "shmmni", "shm_rmid_forced",
};

static bool
component_char (char ch, bool dot_ok)
{
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
         || ch == '_' || ch == '-' || ch == ':' || ch == '@' || ch == '+' || (dot_ok && ch == '.');
}

/* Whether component C (in REL: followed by '/' or the end) is S. */
static bool
comp_is (const char *c, const char *s)
{
  size_t n = strlen (s);
  return strncmp (c, s, n) == 0 && (c[n] == '/' || c[n] == '\0');
}

int
oci_sysctl_check (const char *key, unsigned long own, char *rel, size_t size, csr_error **err)
{
  size_t len = strlen (key);
  if (len == 0 || len > SYSCTL_MAX || size < len + 1)
    return csr_error_set (err, 0, "linux.sysctl: '%s': invalid key (empty or too long)", key);
  size_t first = strcspn (key, "./");
  char sep = key[first] == '/' ? '/' : '.';
  /* Split into components: REL holds them joined by '/'. */
  const char *comp[64];
  size_t n = 0;
  size_t o = 0;
  for (const char *p = key;;)
    {
      const char *end = strchr (p, sep);
      size_t clen = end ? (size_t)(end - p) : strlen (p);
      bool ok = clen > 0 && n < sizeof comp / sizeof comp[0];
      for (size_t i = 0; ok && i < clen; i++)
        ok = component_char (p[i], sep == '/');
      if (ok && ((clen == 1 && p[0] == '.') || (clen == 2 && p[0] == '.' && p[1] == '.')))
        ok = false;
      if (!ok)
        return csr_error_set (err, 0,
                              "linux.sysctl: '%s': invalid key (components of letters, digits, "
                              "'_' and '-' separated by '.', or by '/'; no empty, '.' or '..' "
                              "component)",
                              key);
      if (o)
        rel[o++] = '/';
      comp[n++] = rel + o;
      memcpy (rel + o, p, clen);
      o += clen;
      rel[o] = '\0';
      if (end == NULL)
        break;
      p = end + 1;
    }
  unsigned long need = 0;
  const char *kind = NULL;
  if (n >= 2 && comp_is (comp[0], "net"))
    need = CLONE_NEWNET, kind = "network";
  else if (n >= 3 && comp_is (comp[0], "fs") && comp_is (comp[1], "mqueue"))
    need = CLONE_NEWIPC, kind = "IPC";
  else if (n == 2 && comp_is (comp[0], "kernel"))
    {
      for (size_t i = 0; i < sizeof ipc_kernel_keys / sizeof ipc_kernel_keys[0]; i++)
        if (strcmp (comp[1], ipc_kernel_keys[i]) == 0)
          need = CLONE_NEWIPC, kind = "IPC";
      if (strcmp (comp[1], "domainname") == 0 || strcmp (comp[1], "hostname") == 0)
        need = CLONE_NEWUTS, kind = "UTS";
    }
  if (need == 0)
    return csr_error_set (
        err, 0,
        "linux.sysctl: '%s' is not namespaced (it would be the host's); only "
        "net.*, kernel.msg{max,mnb,mni}, kernel.sem, kernel.shm{all,max,mni,"
        "_rmid_forced}, fs.mqueue.*, kernel.hostname and kernel.domainname can be set",
        key);
  if ((own & need) == 0)
    return csr_error_set (err, 0,
                          "linux.sysctl: '%s' needs the container's own %s namespace (none in "
                          "linux.namespaces, or the caller's own joined by path)",
                          key, kind);
  return 0;
}

static const char *
ns_file (int flag)
{
  switch (flag)
    {
    case CLONE_NEWNET:
      return "net";
    case CLONE_NEWIPC:
      return "ipc";
    case CLONE_NEWUTS:
      return "uts";
    case CLONE_NEWNS:
      return "mnt";
    case CLONE_NEWPID:
      return "pid";
    case CLONE_NEWUSER:
      return "user";
    case CLONE_NEWCGROUP:
      return "cgroup";
    default:
      return NULL;
    }
}

static bool
same_file (const char *a, const struct stat *b)
{
  struct stat st;
  return stat (a, &st) == 0 && st.st_dev == b->st_dev && st.st_ino == b->st_ino;
}

unsigned long
oci_config_own_namespaces (const struct oci_config *c)
{
  unsigned long own = 0;
  for (size_t i = 0; i < c->n_namespaces; i++)
    {
      const struct oci_namespace *ns = &c->namespaces[i];
      if (ns->path == NULL)
        {
          own |= (unsigned long)ns->flag;
          continue;
        }
      const char *f = ns_file (ns->flag);
      struct stat st;
      if (f == NULL || stat (ns->path, &st) < 0)
        continue; /* not known to be another namespace: not the container's own */
      char self[64], init[64];
      snprintf (self, sizeof self, "/proc/self/ns/%s", f);
      snprintf (init, sizeof init, "/proc/1/ns/%s", f);
      if (!same_file (self, &st) && !same_file (init, &st))
        own |= (unsigned long)ns->flag;
    }
  return own;
}

/* The lexical form of an absolute path: no empty, "." or ".." components
 * (".." at the top stays at the top), no trailing '/'.  Into OUT (SIZE). */
static bool
clean_path (const char *in, char *out, size_t size)
{
  size_t o = 0;
  if (size < 2)
    return false;
  out[o++] = '/';
  const char *p = in, *c;
  size_t n;
  while ((c = csr_path_next (&p, &n)) != NULL)
    {
      if (csr_path_is_dot (c, n))
        ;
      else if (csr_path_is_dotdot (c, n))
        {
          while (o > 1 && out[o - 1] != '/')
            o--;
          if (o > 1)
            o--;
        }
      else
        {
          if (o + (o > 1) + n + 1 > size)
            return false;
          if (o > 1)
            out[o++] = '/';
          memcpy (out + o, c, n);
          o += n;
        }
    }
  out[o] = '\0';
  return true;
}

bool
oci_path_is_root (const char *dest)
{
  char buf[4096];
  return clean_path (dest, buf, sizeof buf) && strcmp (buf, "/") == 0;
}

bool
oci_path_is_dev (const char *dest)
{
  char buf[4096];
  return clean_path (dest, buf, sizeof buf) && strcmp (buf, "/dev") == 0;
}

static bool
is_bind (const struct oci_mount *m)
{
  if (m->type && strcmp (m->type, "bind") == 0)
    return true;
  for (size_t i = 0; i < m->n_options; i++)
    if (strcmp (m->options[i], "bind") == 0 || strcmp (m->options[i], "rbind") == 0)
      return true;
  return false;
}

enum oci_dev_kind
oci_config_dev_kind (const struct oci_config *c)
{
  enum oci_dev_kind k = OCI_DEV_NONE;
  for (size_t i = 0; i < c->n_mounts; i++)
    if (oci_path_is_dev (c->mounts[i].destination))
      k = is_bind (&c->mounts[i])                                         ? OCI_DEV_BIND
          : c->mounts[i].type && strcmp (c->mounts[i].type, "tmpfs") == 0 ? OCI_DEV_TMPFS
                                                                          : OCI_DEV_NONE;
  return k;
}

static int
check_sysctls (const struct oci_config *c, unsigned long own, csr_error **err)
{
  for (size_t i = 0; i < c->n_sysctl; i++)
    {
      char rel[SYSCTL_MAX + 1];
      if (oci_sysctl_check (c->sysctl_keys[i], own, rel, sizeof rel, err) < 0)
        return -1;
      /* kernel.hostname is refused outright, as runc and crun do: the
       * "hostname" field is the one way to set it. */
      if (strcmp (rel, "kernel/hostname") == 0)
        return csr_error_set (err, 0,
                              "linux.sysctl: '%s' conflicts with the config's \"hostname\" field "
                              "(set that instead)",
                              c->sysctl_keys[i]);
      /* crun: a kernel.domainname that says otherwise than the config's field. */
      const char *field = strcmp (rel, "kernel/domainname") == 0 ? c->domainname : NULL;
      if (field && field[0] && strcmp (field, c->sysctl_values[i]) != 0)
        return csr_error_set (err, 0, "linux.sysctl: '%s' conflicts with the config's \"%s\"",
                              c->sysctl_keys[i], rel + 7);
    }
  return 0;
}

/* Without a mount namespace csrun only chroots into root.path: whatever needs
 * a mount would be made in the caller's mount namespace. */
static int
check_no_mount_namespace (const struct oci_config *c, unsigned long own, csr_error **err)
{
  const char *path = NULL;
  /* A mount namespace given by path is the container's: csrun joins it and
   * sets the container up there, as runc does.  The caller's own (or pid
   * 1's) would be set up in place of the caller's root: refused. */
  if (oci_config_has_namespace (c, CLONE_NEWNS, &path) && path && (own & CLONE_NEWNS) == 0)
    return csr_error_set (err, 0,
                          "linux.namespaces: the mount namespace '%s' is the caller's own (or not "
                          "a mount namespace): csrun would set the container up in it; leave out "
                          "the path for a new one",
                          path);
  if (oci_config_has_namespace (c, CLONE_NEWNS, NULL))
    return 0;
  const char *what = c->n_mounts             ? "mounts"
                     : c->n_masked_paths     ? "linux.maskedPaths"
                     : c->n_readonly_paths   ? "linux.readonlyPaths"
                     : c->root_readonly      ? "root.readonly"
                     : c->n_devices          ? "linux.devices"
                     : c->rootfs_propagation ? "linux.rootfsPropagation"
                                             : NULL;
  if (what)
    return csr_error_set (err, 0,
                          "%s: needs a mount namespace of the container's own: add {\"type\": "
                          "\"mount\"} to linux.namespaces (without one, csrun mounts nothing and "
                          "only chroots into root.path)",
                          what);
  return 0;
}

static int
check_devices (const struct oci_config *c, csr_error **err)
{
  if (c->n_devices == 0)
    return 0;
  for (size_t i = 0; i < c->n_devices; i++)
    {
      char buf[4096];
      const char *p = c->devices[i].path;
      /* Anywhere in the container (runc, crun): a node outside /dev is made
       * in the /dev tmpfs and bound onto an empty file at its path. */
      if (!clean_path (p, buf, sizeof buf) || strcmp (buf, p) != 0 || strcmp (buf, "/") == 0
          || strcmp (buf, "/dev") == 0)
        return csr_error_set (err, 0,
                              "linux.devices[%zu]: '%s' is not a plain absolute path (no '..', "
                              "'.', '//' or trailing '/')",
                              i, p);
    }
  if (oci_config_dev_kind (c) == OCI_DEV_NONE)
    return csr_error_set (err, 0,
                          "linux.devices needs a tmpfs mounted at /dev (csrun makes device nodes "
                          "only there, never in the rootfs's own directory)");
  return 0;
}

int
oci_apparmor_check (const char *profile, const char *enabled_path, csr_error **err)
{
  if (profile == NULL || *profile == '\0')
    return 0;
  cleanup_free char *text = NULL;
  cleanup_error csr_error *e = NULL;
  size_t len = 0;
  bool on = false;
  if (csr_read_file (enabled_path, 64, &text, &len, &e) == 0)
    on = len > 0 && text[0] == 'Y';
  else if (e->status != ENOENT) /* ENOENT: a kernel without AppArmor */
    return csr_error_set (err, e->status,
                          "process.apparmorProfile \"%s\": cannot tell whether AppArmor is "
                          "enabled (%s)",
                          profile, e->msg);
  if (!on)
    return csr_error_set (
        err, 0, "process.apparmorProfile \"%s\": AppArmor is not enabled on this host", profile);
  return 0;
}

int
oci_config_validate (const struct oci_config *c, csr_error **err)
{
  unsigned long own = oci_config_own_namespaces (c);
  if (check_sysctls (c, own, err) < 0 || check_no_mount_namespace (c, own, err) < 0
      || check_devices (c, err) < 0
      || oci_apparmor_check (c->apparmor_profile, OCI_APPARMOR_ENABLED, err) < 0)
    return -1;
  /* runc: no hostname without a UTS namespace; and never the caller's. */
  const char *field = c->hostname && c->hostname[0]       ? "hostname"
                      : c->domainname && c->domainname[0] ? "domainname"
                                                          : NULL;
  if (field && (own & CLONE_NEWUTS) == 0)
    return csr_error_set (err, 0,
                          "\"%s\" needs the container's own UTS namespace (none in "
                          "linux.namespaces, or the caller's own joined by path)",
                          field);
  for (size_t i = 0; i < c->n_mounts; i++)
    if (oci_path_is_root (c->mounts[i].destination))
      return csr_error_set (err, 0,
                            "mounts[%zu]: cannot mount over the container's root itself "
                            "(destination '%s')",
                            i, c->mounts[i].destination);
  return 0;
}
