#include "config.h"

/* csrun — linux.resources of an OCI container: the JSON object parsed into
 * struct csr_cgroup_resources, and written into the container's cgroup
 * files (v1 and v2).  See cgroup.h.
 *
 * Which file a setting goes to is what runc and crun write (the runtime
 * spec names the settings, not the files): v1 memory.soft_limit_in_bytes
 * for memory.reservation, v2 memory.low; v1 cpu.rt_* (v2 has no realtime
 * group scheduling: an error); blkio.weight or blkio.bfq.weight, v2
 * io.bfq.weight or io.weight (the 10..1000 scale converted); blkio.throttle.*
 * and v2 io.max; hugetlb.SIZE.limit_in_bytes / hugetlb.SIZE.max;
 * net_cls.classid, net_prio.ifpriomap (v1 only); unified keys as file names
 * (v2 only: on a v1 container cgroup, runc's "invalid configuration").
 *
 * On v1 each setting goes to the first of the container's directories that
 * has its file, so the hierarchies need no names (and the unit tests' plain
 * directories work as fake ones). */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/log.h"
#include "resources.h"
#include "oci-config.h"
#include "devices.h"

/* ---------------------------------------------------------------- parsing */

/* "PATH[.KEY]: MESSAGE" at X's path (linux.resources...). */
static int pfail (struct csr_jpath *x, const char *key, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int
pfail (struct csr_jpath *x, const char *key, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  size_t saved = key ? csr_jpath_push_key (x, key) : x->len;
  csr_jpath_fail (x, "%s", msg);
  csr_jpath_pop (x, saved);
  return -1;
}

/* The getters below are util/json.c's, answering 1 when KEY was there (0:
 * absent or null, -1: an error at its path), as the parsers here want. */
static bool
present (yajl_val o, const char *key)
{
  yajl_val v = csr_json_get (o, key);
  return v != NULL && v->type != yajl_t_null;
}

/* An integer in [MIN, MAX]. */
static int
get_int (struct csr_jpath *x, yajl_val o, const char *key, int64_t min, int64_t max, int64_t *out)
{
  bool got = false;
  return csr_jpath_get_i64 (x, o, key, false, min, max, out, &got) < 0 ? -1 : got;
}

/* An unsigned integer up to MAX (UINT64_MAX at most). */
static int
get_uint (struct csr_jpath *x, yajl_val o, const char *key, uint64_t max, uint64_t *out)
{
  bool got = false;
  return csr_jpath_get_u64 (x, o, key, false, max, out, &got) < 0 ? -1 : got;
}

static int
get_str (struct csr_jpath *x, yajl_val o, const char *key, char **out)
{
  if (!present (o, key))
    return 0;
  return csr_jpath_get_string (x, o, key, false, out) < 0 ? -1 : 1;
}

static int
get_bool (struct csr_jpath *x, yajl_val o, const char *key, bool *out)
{
  if (!present (o, key))
    return 0;
  return csr_jpath_get_bool (x, o, key, out) < 0 ? -1 : 1;
}

/* The object or array KEY of O in *OUT (NULL: absent). */
static int
get_obj (struct csr_jpath *x, yajl_val o, const char *key, yajl_type want, yajl_val *out)
{
  size_t saved;
  int r = csr_jpath_get_typed (x, o, key, false, want,
                               want == yajl_t_array ? "an array" : "an object", out, &saved);
  if (r > 0)
    csr_jpath_pop (x, saved);
  return r;
}

static int
parse_memory (struct csr_jpath *x, yajl_val res, struct csr_cgroup_resources *r)
{
  yajl_val m;
  int rc = get_obj (x, res, "memory", yajl_t_object, &m);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, "memory");
  int64_t v;
  if ((rc = get_int (x, m, "limit", -1, INT64_MAX, &v)) < 0)
    return -1;
  if (rc > 0)
    r->memory_limit = v;
  if ((rc = get_int (x, m, "swap", -1, INT64_MAX, &v)) < 0)
    return -1;
  if (rc > 0)
    r->memory_swap = v;
  if ((rc = get_int (x, m, "reservation", -1, INT64_MAX, &r->memory_reservation)) < 0)
    return -1;
  r->has_memory_reservation = rc > 0;
  if ((rc = get_int (x, m, "kernel", -1, INT64_MAX, &r->memory_kernel)) < 0)
    return -1;
  r->has_memory_kernel = rc > 0;
  if ((rc = get_int (x, m, "kernelTCP", -1, INT64_MAX, &r->memory_kernel_tcp)) < 0)
    return -1;
  r->has_memory_kernel_tcp = rc > 0;
  /* runc: "invalid memory swappiness value" above 100 */
  if ((rc = get_uint (x, m, "swappiness", 100, &r->memory_swappiness)) < 0)
    return -1;
  r->has_memory_swappiness = rc > 0;
  if ((rc = get_bool (x, m, "disableOOMKiller", &r->disable_oom_killer)) < 0)
    return -1;
  r->has_disable_oom_killer = rc > 0;
  csr_jpath_pop (x, l);
  return 0;
}

static int
parse_cpu (struct csr_jpath *x, yajl_val res, struct csr_cgroup_resources *r)
{
  yajl_val c;
  int rc = get_obj (x, res, "cpu", yajl_t_object, &c);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, "cpu");
  int64_t v;
  if ((rc = get_int (x, c, "quota", -1, INT64_MAX, &v)) < 0)
    return -1;
  if (rc > 0)
    r->cpu_quota = v;
  if (get_uint (x, c, "period", UINT64_MAX, &r->cpu_period) < 0
      || get_uint (x, c, "shares", UINT64_MAX, &r->cpu_shares) < 0)
    return -1;
  if ((rc = get_int (x, c, "realtimeRuntime", -1, INT64_MAX, &r->cpu_rt_runtime)) < 0)
    return -1;
  r->has_cpu_rt_runtime = rc > 0 && r->cpu_rt_runtime != 0;
  if ((rc = get_uint (x, c, "realtimePeriod", UINT64_MAX, &r->cpu_rt_period)) < 0)
    return -1;
  r->has_cpu_rt_period = rc > 0 && r->cpu_rt_period != 0;
  if ((rc = get_int (x, c, "idle", 0, 1, &r->cpu_idle)) < 0)
    return -1;
  r->has_cpu_idle = rc > 0;
  if (get_str (x, c, "cpus", &r->cpu_cpus) < 0 || get_str (x, c, "mems", &r->cpu_mems) < 0)
    return -1;
  /* "" means "not set" (runc and crun skip it). */
  if (r->cpu_cpus && *r->cpu_cpus == '\0')
    {
      free (r->cpu_cpus);
      r->cpu_cpus = NULL;
    }
  if (r->cpu_mems && *r->cpu_mems == '\0')
    {
      free (r->cpu_mems);
      r->cpu_mems = NULL;
    }
  csr_jpath_pop (x, l);
  return 0;
}

/* blockIO.weightDevice or a throttle array into *OUT / *N. */
static int
parse_blkio_devs (struct csr_jpath *x, yajl_val b, const char *key, bool weights,
                  struct oci_blkio_dev **out, size_t *n)
{
  yajl_val a;
  int rc = get_obj (x, b, key, yajl_t_array, &a);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, key);
  if (a->u.array.len && (*out = calloc (a->u.array.len, sizeof **out)) == NULL)
    return csr_error_errno (x->err, "%s", x->path);
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val o = a->u.array.values[i];
      size_t l2 = csr_jpath_push_index (x, i);
      if (o->type != yajl_t_object)
        return pfail (x, NULL, "expected an object, got %s", csr_json_type_name (o));
      struct oci_blkio_dev *d = &(*out)[(*n)++];
      int64_t w;
      if ((rc = get_int (x, o, "major", 0, UINT32_MAX, &d->major)) <= 0)
        return rc < 0 ? -1 : pfail (x, "major", "required");
      if ((rc = get_int (x, o, "minor", 0, UINT32_MAX, &d->minor)) <= 0)
        return rc < 0 ? -1 : pfail (x, "minor", "required");
      if (weights)
        {
          if ((rc = get_int (x, o, "weight", 10, 1000, &w)) < 0)
            return -1;
          d->has_weight = rc > 0;
          d->weight = (uint16_t)w;
          if ((rc = get_int (x, o, "leafWeight", 10, 1000, &w)) < 0)
            return -1;
          d->has_leaf_weight = rc > 0;
          d->leaf_weight = (uint16_t)w;
        }
      else if ((rc = get_uint (x, o, "rate", UINT64_MAX, &d->rate)) <= 0)
        return rc < 0 ? -1 : pfail (x, "rate", "required");
      csr_jpath_pop (x, l2);
    }
  csr_jpath_pop (x, l);
  return 0;
}

static int
parse_blkio (struct csr_jpath *x, yajl_val res, struct csr_cgroup_resources *r)
{
  static const char *const throttles[OCI_THROTTLE_N]
      = { "throttleReadBpsDevice", "throttleWriteBpsDevice", "throttleReadIOPSDevice",
          "throttleWriteIOPSDevice" };
  yajl_val b;
  int rc = get_obj (x, res, "blockIO", yajl_t_object, &b);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, "blockIO");
  int64_t w;
  /* 0 is "not set" for runc; else the kernel's 10..1000. */
  if ((rc = get_int (x, b, "weight", 0, 1000, &w)) < 0)
    return -1;
  if (rc > 0 && w != 0 && w < 10)
    return pfail (x, "weight", "%" PRId64 " is out of range (10..1000)", w);
  r->has_blkio_weight = rc > 0 && w != 0;
  r->blkio_weight = (uint16_t)w;
  if ((rc = get_int (x, b, "leafWeight", 0, 1000, &w)) < 0)
    return -1;
  if (rc > 0 && w != 0 && w < 10)
    return pfail (x, "leafWeight", "%" PRId64 " is out of range (10..1000)", w);
  r->has_blkio_leaf_weight = rc > 0 && w != 0;
  r->blkio_leaf_weight = (uint16_t)w;
  if (parse_blkio_devs (x, b, "weightDevice", true, &r->blkio_weight_devices,
                        &r->n_blkio_weight_devices)
      < 0)
    return -1;
  for (int i = 0; i < OCI_THROTTLE_N; i++)
    if (parse_blkio_devs (x, b, throttles[i], false, &r->blkio_throttle[i], &r->n_blkio_throttle[i])
        < 0)
      return -1;
  csr_jpath_pop (x, l);
  return 0;
}

/* "2MB", "1GB", "64KB": a number and a unit, as the kernel names hugetlb
 * files. */
static bool
page_size_syntax (const char *s)
{
  size_t d = strspn (s, "0123456789");
  return d > 0 && s[0] != '0'
         && (strcmp (s + d, "KB") == 0 || strcmp (s + d, "MB") == 0 || strcmp (s + d, "GB") == 0);
}

static int
parse_hugetlb (struct csr_jpath *x, yajl_val res, struct csr_cgroup_resources *r)
{
  yajl_val a;
  int rc = get_obj (x, res, "hugepageLimits", yajl_t_array, &a);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, "hugepageLimits");
  if (a->u.array.len && (r->hugetlb = calloc (a->u.array.len, sizeof *r->hugetlb)) == NULL)
    return csr_error_errno (x->err, "%s", x->path);
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val o = a->u.array.values[i];
      size_t l2 = csr_jpath_push_index (x, i);
      if (o->type != yajl_t_object)
        return pfail (x, NULL, "expected an object, got %s", csr_json_type_name (o));
      struct oci_hugetlb_limit *h = &r->hugetlb[r->n_hugetlb++];
      if ((rc = get_str (x, o, "pageSize", &h->page_size)) <= 0)
        return rc < 0 ? -1 : pfail (x, "pageSize", "required");
      if (!page_size_syntax (h->page_size))
        return pfail (x, "pageSize", "invalid hugepage size '%s' (expected e.g. 2MB or 1GB)",
                      h->page_size);
      if ((rc = get_uint (x, o, "limit", UINT64_MAX, &h->limit)) <= 0)
        return rc < 0 ? -1 : pfail (x, "limit", "required");
      csr_jpath_pop (x, l2);
    }
  csr_jpath_pop (x, l);
  return 0;
}

static int
parse_network (struct csr_jpath *x, yajl_val res, struct csr_cgroup_resources *r)
{
  yajl_val n;
  int rc = get_obj (x, res, "network", yajl_t_object, &n);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, "network");
  uint64_t id;
  if ((rc = get_uint (x, n, "classID", UINT32_MAX, &id)) < 0)
    return -1;
  r->has_net_class_id = rc > 0;
  r->net_class_id = (uint32_t)id;
  yajl_val a;
  if ((rc = get_obj (x, n, "priorities", yajl_t_array, &a)) < 0)
    return -1;
  if (rc > 0)
    {
      size_t l2 = csr_jpath_push_key (x, "priorities");
      if (a->u.array.len && (r->net_prios = calloc (a->u.array.len, sizeof *r->net_prios)) == NULL)
        return csr_error_errno (x->err, "%s", x->path);
      for (size_t i = 0; i < a->u.array.len; i++)
        {
          yajl_val o = a->u.array.values[i];
          size_t l3 = csr_jpath_push_index (x, i);
          if (o->type != yajl_t_object)
            return pfail (x, NULL, "expected an object, got %s", csr_json_type_name (o));
          struct oci_net_prio *p = &r->net_prios[r->n_net_prios++];
          if ((rc = get_str (x, o, "name", &p->name)) <= 0)
            return rc < 0 ? -1 : pfail (x, "name", "required");
          if (*p->name == '\0' || strpbrk (p->name, " \t\n/"))
            return pfail (x, "name", "invalid interface name '%s'", p->name);
          uint64_t prio;
          if ((rc = get_uint (x, o, "priority", UINT32_MAX, &prio)) <= 0)
            return rc < 0 ? -1 : pfail (x, "priority", "required");
          p->priority = (uint32_t)prio;
          csr_jpath_pop (x, l3);
        }
      csr_jpath_pop (x, l2);
    }
  csr_jpath_pop (x, l);
  return 0;
}

static int
parse_unified (struct csr_jpath *x, yajl_val res, struct csr_cgroup_resources *r)
{
  yajl_val u;
  int rc = get_obj (x, res, "unified", yajl_t_object, &u);
  if (rc <= 0)
    return rc;
  size_t l = csr_jpath_push_key (x, "unified");
  size_t n = u->u.object.len;
  if (n
      && ((r->unified_keys = calloc (n, sizeof (char *))) == NULL
          || (r->unified_values = calloc (n, sizeof (char *))) == NULL))
    return csr_error_errno (x->err, "%s", x->path);
  for (size_t i = 0; i < n; i++)
    {
      const char *k = u->u.object.keys[i];
      yajl_val v = u->u.object.values[i];
      /* A file of the container's own cgroup: no path, no cgroup.* core
       * file that moves processes or makes children. */
      if (strchr (k, '/'))
        return pfail (x, NULL, "invalid key '%s' (expected a cgroup file name such as memory.max)",
                      k);
      /* crun's words for a key that is not CONTROLLER.FILE. */
      if (strchr (k, '.') == NULL || k[0] == '.')
        return pfail (x, NULL, "the specified key has not the form CONTROLLER.VALUE `%s`", k);
      if (strcmp (k, "cgroup.procs") == 0 || strcmp (k, "cgroup.threads") == 0
          || strcmp (k, "cgroup.subtree_control") == 0 || strcmp (k, "cgroup.kill") == 0)
        return pfail (x, k, "not a resource file");
      if (v->type != yajl_t_string)
        return pfail (x, k, "expected a string, got %s", csr_json_type_name (v));
      r->unified_keys[i] = strdup (k);
      r->unified_values[i] = strdup (v->u.string);
      r->n_unified = i + 1;
      if (r->unified_keys[i] == NULL || r->unified_values[i] == NULL)
        return csr_error_errno (x->err, "%s", x->path);
    }
  csr_jpath_pop (x, l);
  return 0;
}

int
oci_cgroup_resources_parse (const char *json, size_t len, struct csr_cgroup_resources *r,
                            csr_error **err)
{
  memset (r, 0, sizeof *r);
  cleanup_free char *text = strndup (json, len);
  if (text == NULL)
    return csr_error_errno (err, "linux.resources");
  char ebuf[256] = "";
  yajl_val doc = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (doc == NULL)
    {
      char *nl = strchr (ebuf, '\n');
      if (nl)
        *nl = '\0';
      return csr_error_set (err, EINVAL, "linux.resources: invalid JSON: %s", ebuf);
    }
  struct csr_jpath x = { .err = err, .what = "linux.resources" };
  csr_jpath_push_key (&x, "linux.resources");
  int rc = 0;
  if (doc->type != yajl_t_object)
    rc = pfail (&x, NULL, "expected an object, got %s", csr_json_type_name (doc));
  else if (parse_memory (&x, doc, r) < 0 || parse_cpu (&x, doc, r) < 0
           || parse_blkio (&x, doc, r) < 0 || parse_hugetlb (&x, doc, r) < 0
           || parse_network (&x, doc, r) < 0 || parse_unified (&x, doc, r) < 0)
    rc = -1;
  else
    {
      yajl_val p;
      if ((rc = get_obj (&x, doc, "pids", yajl_t_object, &p)) > 0)
        {
          size_t l = csr_jpath_push_key (&x, "pids");
          int64_t v = 0;
          rc = get_int (&x, p, "limit", INT64_MIN, INT64_MAX, &v);
          if (rc > 0)
            r->pids_limit = v;
          csr_jpath_pop (&x, l);
        }
      yajl_val rd;
      if (rc >= 0 && (rc = get_obj (&x, doc, "rdma", yajl_t_object, &rd)) > 0
          && rd->u.object.len > 0)
        rc = pfail (&x, "rdma", "not supported by csrun");
      rc = rc < 0 ? -1 : 0;
    }
  yajl_tree_free (doc);
  if (rc < 0)
    oci_cgroup_resources_release (r);
  return rc;
}

void
oci_cgroup_resources_release (struct csr_cgroup_resources *r)
{
  if (r == NULL)
    return;
  free (r->cpu_cpus);
  free (r->cpu_mems);
  free (r->blkio_weight_devices);
  for (int i = 0; i < OCI_THROTTLE_N; i++)
    free (r->blkio_throttle[i]);
  for (size_t i = 0; i < r->n_hugetlb; i++)
    free (r->hugetlb[i].page_size);
  free (r->hugetlb);
  for (size_t i = 0; i < r->n_net_prios; i++)
    free (r->net_prios[i].name);
  free (r->net_prios);
  for (size_t i = 0; i < r->n_unified; i++)
    {
      free (r->unified_keys[i]);
      free (r->unified_values[i]);
    }
  free (r->unified_keys);
  free (r->unified_values);
  const struct oci_dev_rule *d = r->devices;
  size_t nd = r->n_devices;
  bool sd = r->set_devices;
  memset (r, 0, sizeof *r);
  r->devices = d;
  r->n_devices = nd;
  r->set_devices = sd;
}

bool
oci_cgroup_resources_any (const struct csr_cgroup_resources *r)
{
  size_t throttles = 0;
  for (int i = 0; i < OCI_THROTTLE_N; i++)
    throttles += r->n_blkio_throttle[i];
  return r->memory_limit || r->memory_swap || r->pids_limit || r->cpu_quota || r->cpu_period
         || r->cpu_shares || r->has_memory_reservation || r->has_memory_kernel
         || r->has_memory_kernel_tcp || r->has_memory_swappiness || r->has_disable_oom_killer
         || r->has_cpu_rt_runtime || r->has_cpu_rt_period || r->has_cpu_idle || r->cpu_cpus
         || r->cpu_mems || r->has_blkio_weight || r->has_blkio_leaf_weight
         || r->n_blkio_weight_devices || throttles || r->n_hugetlb || r->has_net_class_id
         || r->n_net_prios || r->n_unified;
}
