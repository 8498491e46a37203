/* csrun — the "linux" object of config.json: namespaces, id mappings,
 * devices, linux.resources (the device rules and the limits csrun reads
 * itself; the whole object is also handed on as text to
 * oci_cgroup_resources_parse), linux.seccomp (handed on as text to
 * seccomp.c), sysctl, masked and read-only paths, propagation.  Part of
 * the config.json parser (config.c). */

#include "config.h"
#include "config-internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/json-gen.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct name_value namespace_names[] = {
  { "pid", CLONE_NEWPID },       { "network", CLONE_NEWNET }, { "mount", CLONE_NEWNS },
  { "ipc", CLONE_NEWIPC },       { "uts", CLONE_NEWUTS },     { "user", CLONE_NEWUSER },
  { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

static const char *const propagation_names[] = {
  "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable",
};

static int
parse_namespaces (struct csr_jpath *x, yajl_val lx, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = oci_cfg_get_array_alloc (x, lx, "namespaces", sizeof *c->namespaces, &arr, &s,
                                   (void **)&c->namespaces, &c->n_namespaces);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_namespace *ns = &c->namespaces[i];
      yajl_val o;
      size_t s2;
      if (csr_jpath_array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      cleanup_free char *type = NULL;
      if (csr_jpath_get_string (x, o, "type", true, &type) < 0
          || csr_jpath_get_string (x, o, "path", false, &ns->path) < 0)
        return -1;
      size_t k;
      for (k = 0; k < N_ELEMENTS (namespace_names); k++)
        if (strcmp (type, namespace_names[k].name) == 0)
          break;
      size_t s3 = csr_jpath_push_key (x, "type");
      if (k == N_ELEMENTS (namespace_names))
        return csr_jpath_fail (x, "unknown namespace type '%s'", type);
      ns->flag = namespace_names[k].value;
      for (size_t j = 0; j < i; j++)
        if (c->namespaces[j].flag == ns->flag)
          return csr_jpath_fail (x, "duplicate namespace '%s'", type);
      csr_jpath_pop (x, s3);
      /* Go writers omit an empty path; treat "" as "no path" like they do. */
      if (ns->path && ns->path[0] == '\0')
        {
          free (ns->path);
          ns->path = NULL;
        }
      if (ns->path)
        {
          s3 = csr_jpath_push_key (x, "path");
          if (oci_cfg_check_absolute (x, ns->path) < 0)
            return -1;
          csr_jpath_pop (x, s3);
        }
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_idmaps (struct csr_jpath *x, yajl_val lx, const char *key, struct oci_idmap **out,
              size_t *n_out)
{
  yajl_val arr;
  size_t s;
  int r = oci_cfg_get_array_alloc (x, lx, key, sizeof **out, &arr, &s, (void **)out, n_out);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_idmap *m = &(*out)[i];
      yajl_val o;
      size_t s2;
      if (csr_jpath_array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      if (csr_jpath_get_u32 (x, o, "containerID", true, UINT32_MAX, &m->container_id, NULL) < 0
          || csr_jpath_get_u32 (x, o, "hostID", true, UINT32_MAX, &m->host_id, NULL) < 0
          || csr_jpath_get_u32 (x, o, "size", true, UINT32_MAX, &m->size, NULL) < 0)
        return -1;
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_devices (struct csr_jpath *x, yajl_val lx, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = oci_cfg_get_array_alloc (x, lx, "devices", sizeof *c->devices, &arr, &s,
                                   (void **)&c->devices, &c->n_devices);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_device *d = &c->devices[i];
      yajl_val o;
      size_t s2;
      if (csr_jpath_array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      cleanup_free char *type = NULL;
      if (csr_jpath_get_string (x, o, "type", true, &type) < 0)
        return -1;
      size_t s3 = csr_jpath_push_key (x, "type");
      if (strcmp (type, "c") != 0 && strcmp (type, "b") != 0 && strcmp (type, "u") != 0
          && strcmp (type, "p") != 0)
        return csr_jpath_fail (x, "unknown device type '%s'", type);
      csr_jpath_pop (x, s3);
      d->type = type[0];
      if (csr_jpath_get_string (x, o, "path", true, &d->path) < 0)
        return -1;
      s3 = csr_jpath_push_key (x, "path");
      if (oci_cfg_check_absolute (x, d->path) < 0)
        return -1;
      csr_jpath_pop (x, s3);
      bool need_numbers = d->type != 'p';
      if (csr_jpath_get_i64 (x, o, "major", need_numbers, INT64_MIN, INT64_MAX, &d->major, NULL) < 0
          || csr_jpath_get_i64 (x, o, "minor", need_numbers, INT64_MIN, INT64_MAX, &d->minor, NULL)
                 < 0
          || csr_jpath_get_u32 (x, o, "fileMode", false, UINT32_MAX, &d->file_mode,
                                &d->has_file_mode)
                 < 0
          || csr_jpath_get_u32 (x, o, "uid", false, OCI_ID_MAX, &d->uid, &d->has_uid) < 0
          || csr_jpath_get_u32 (x, o, "gid", false, OCI_ID_MAX, &d->gid, &d->has_gid) < 0)
        return -1;
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

/* linux.resources.devices, in order (the device cgroup, see oci/devices.h).
 * Strict: "allow" is required; "access" too (runc refuses a rule without
 * one, and the spec gives an absent one no meaning); major and minor are
 * device numbers (at most 32 bits: what the kernel compares) or -1 (any). */
static int
parse_resource_devices (struct csr_jpath *x, yajl_val res, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = oci_cfg_get_array_alloc (x, res, "devices", sizeof *c->resources.devices, &arr, &s,
                                   (void **)&c->resources.devices, &c->resources.n_devices);
  if (r <= 0)
    return r;
  c->resources.has_devices = true;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_dev_rule *d = &c->resources.devices[i];
      yajl_val o;
      size_t s2;
      if (csr_jpath_array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      yajl_val allow;
      size_t s3;
      if (csr_jpath_get_typed (x, o, "allow", true, yajl_t_true, "a boolean", &allow, &s3) < 0)
        return -1;
      d->allow = allow->type == yajl_t_true;
      csr_jpath_pop (x, s3);
      cleanup_free char *type = NULL;
      cleanup_free char *access = NULL;
      bool has_major = false, has_minor = false;
      if (csr_jpath_get_string (x, o, "type", false, &type) < 0
          || csr_jpath_get_i64 (x, o, "major", false, -1, UINT32_MAX, &d->major, &has_major) < 0
          || csr_jpath_get_i64 (x, o, "minor", false, -1, UINT32_MAX, &d->minor, &has_minor) < 0
          || csr_jpath_get_string (x, o, "access", true, &access) < 0)
        return -1;
      if (!has_major)
        d->major = -1;
      if (!has_minor)
        d->minor = -1;
      if (type && strcmp (type, "a") != 0 && strcmp (type, "b") != 0 && strcmp (type, "c") != 0)
        {
          csr_jpath_push_key (x, "type");
          return csr_jpath_fail (x, "unknown device type '%s' (expected a, b or c)", type);
        }
      d->type = type ? type[0] : 'a';
      /* Letters in any order; others are ignored, as runc ignores them
       * (its own tests write "rwa"); none of r, w, m is an error. */
      if (strpbrk (access, "rwm") == NULL)
        {
          csr_jpath_push_key (x, "access");
          return csr_jpath_fail (x, "expected a combination of 'r', 'w' and 'm', got '%s'", access);
        }
      d->access = (strchr (access, 'r') ? OCI_DEV_READ : 0U)
                  | (strchr (access, 'w') ? OCI_DEV_WRITE : 0U)
                  | (strchr (access, 'm') ? OCI_DEV_MKNOD : 0U);
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

/* *OUT = V as JSON text (malloc'd), for a part another parser reads
 * (linux.resources, linux.seccomp). */
static int
value_text (struct csr_jpath *x, yajl_val v, char **out)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return csr_jpath_oom (x);
  csr_jgen_tree (&w, v);
  if (w.oom)
    {
      csr_jgen_release (&w);
      return csr_jpath_oom (x);
    }
  if (w.st != yajl_gen_status_ok)
    {
      int st = (int)w.st;
      csr_jgen_release (&w);
      return csr_jpath_fail (x, "cannot re-serialise (yajl_gen error %d)", st);
    }
  csr_error *e = NULL;
  *out = csr_jgen_finish (&w, "linux.resources", NULL, &e);
  if (*out == NULL)
    {
      bool oom = e != NULL && e->status == ENOMEM;
      csr_error_free (e);
      return oom ? csr_jpath_oom (x) : csr_jpath_fail (x, "cannot re-serialise (incomplete JSON)");
    }
  return 0;
}

static int
parse_resources (struct csr_jpath *x, yajl_val lx, struct oci_config *c)
{
  yajl_val res;
  size_t s;
  int r = csr_jpath_get_typed (x, lx, "resources", false, yajl_t_object, "an object", &res, &s);
  if (r <= 0)
    return r;
  if (parse_resource_devices (x, res, c) < 0)
    return -1;
  /* The rest (blockIO, hugepageLimits, network, unified...) is
   * oci_cgroup_resources_parse's: it gets the object as text. */
  if (value_text (x, res, &c->resources.json) < 0)
    return -1;

  yajl_val o;
  size_t s2;
  r = csr_jpath_get_typed (x, res, "memory", false, yajl_t_object, "an object", &o, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (csr_jpath_get_i64 (x, o, "limit", false, -1, INT64_MAX, &c->resources.memory_limit,
                             &c->resources.has_memory_limit)
              < 0
          || csr_jpath_get_i64 (x, o, "swap", false, -1, INT64_MAX, &c->resources.memory_swap,
                                &c->resources.has_memory_swap)
                 < 0)
        return -1;
      csr_jpath_pop (x, s2);
    }

  r = csr_jpath_get_typed (x, res, "pids", false, yajl_t_object, "an object", &o, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (csr_jpath_get_i64 (x, o, "limit", true, INT64_MIN, INT64_MAX, &c->resources.pids_limit,
                             &c->resources.has_pids_limit)
          < 0)
        return -1;
      csr_jpath_pop (x, s2);
    }

  r = csr_jpath_get_typed (x, res, "cpu", false, yajl_t_object, "an object", &o, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (csr_jpath_get_i64 (x, o, "quota", false, -1, INT64_MAX, &c->resources.cpu_quota,
                             &c->resources.has_cpu_quota)
              < 0
          || csr_jpath_get_u64 (x, o, "period", false, UINT64_MAX, &c->resources.cpu_period,
                                &c->resources.has_cpu_period)
                 < 0
          || csr_jpath_get_u64 (x, o, "shares", false, UINT64_MAX, &c->resources.cpu_shares,
                                &c->resources.has_cpu_shares)
                 < 0
          || csr_jpath_get_string (x, o, "cpus", false, &c->resources.cpu_cpus) < 0
          || csr_jpath_get_string (x, o, "mems", false, &c->resources.cpu_mems) < 0)
        return -1;
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

/* ------------------------------------------------- seccomp */

static int
parse_seccomp (struct csr_jpath *x, yajl_val lx, struct oci_config *c)
{
  yajl_val sc;
  size_t s;
  int r = csr_jpath_get_typed (x, lx, "seccomp", false, yajl_t_object, "an object", &sc, &s);
  if (r <= 0)
    return r;
  if (value_text (x, sc, &c->seccomp_json) < 0)
    return -1;
  csr_jpath_pop (x, s);
  return 0;
}

int
oci_cfg_parse_linux (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  yajl_val lx;
  size_t s;
  int r = csr_jpath_get_typed (x, doc, "linux", false, yajl_t_object, "an object", &lx, &s);
  if (r <= 0)
    return r;
  if (parse_namespaces (x, lx, c) < 0
      || parse_idmaps (x, lx, "uidMappings", &c->uid_mappings, &c->n_uid_mappings) < 0
      || parse_idmaps (x, lx, "gidMappings", &c->gid_mappings, &c->n_gid_mappings) < 0
      || parse_devices (x, lx, c) < 0
      || csr_jpath_get_string (x, lx, "cgroupsPath", false, &c->cgroups_path) < 0
      || parse_resources (x, lx, c) < 0 || parse_seccomp (x, lx, c) < 0
      || oci_cfg_get_string_map (x, lx, "sysctl", &c->sysctl_keys, &c->sysctl_values, &c->n_sysctl)
             < 0
      || oci_cfg_get_strv (x, lx, "maskedPaths", false, &c->masked_paths, &c->n_masked_paths,
                           oci_cfg_check_absolute)
             < 0
      || oci_cfg_get_strv (x, lx, "readonlyPaths", false, &c->readonly_paths, &c->n_readonly_paths,
                           oci_cfg_check_absolute)
             < 0
      || csr_jpath_get_string (x, lx, "mountLabel", false, &c->mount_label) < 0
      || csr_jpath_get_string (x, lx, "rootfsPropagation", false, &c->rootfs_propagation) < 0)
    return -1;
  if (c->rootfs_propagation)
    {
      size_t k;
      for (k = 0; k < N_ELEMENTS (propagation_names); k++)
        if (strcmp (c->rootfs_propagation, propagation_names[k]) == 0)
          break;
      if (k == N_ELEMENTS (propagation_names))
        {
          csr_jpath_push_key (x, "rootfsPropagation");
          return csr_jpath_fail (x, "unknown propagation '%s'", c->rootfs_propagation);
        }
    }
  csr_jpath_pop (x, s);
  return 0;
}
