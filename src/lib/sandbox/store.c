/* csrun — where sandboxes live: the per-user state directory, ids and
 * names, spec.json, the keeper's liveness lock, and cleaning up after a
 * keeper that is gone (see sandbox.h). */
#include "config.h"
#include "sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
#include "../util/cleanup.h"
#include "../util/datadir.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/trust.h"
#include "ports.h"

void
csr_sandbox_spec_release (struct csr_sandbox_spec *s)
{
  free (s->name);
  free (s->rootfs);
  free (s->rootfs_dir);
  free (s->layer_dir);
  free (s->layer_digest);
  for (size_t i = 0; s->with && s->with[i]; i++)
    free (s->with[i]);
  free (s->with);
  for (size_t i = 0; s->env && s->env[i]; i++)
    free (s->env[i]);
  free (s->env);
  free (s->workdir);
  free (s->cgroup_v2);
  for (size_t i = 0; i < s->n_cgroup_v1; i++)
    free (s->cgroup_v1[i]);
  memset (s, 0, sizeof *s);
}

int
csr_sandbox_root (char **path, csr_error **err)
{
  static const struct csr_dir_place places[] = {
    { "CSRUN_SANDBOX_DIR", NULL },         { "XDG_RUNTIME_DIR", "/csrun/sandboxes" },
    { NULL, "/run/csrun/sandboxes" },      { "XDG_CACHE_HOME", "/csrun/sandboxes" },
    { "HOME", "/.cache/csrun/sandboxes" }, { NULL, NULL },
  };
  cleanup_free char *dir = NULL;
  int r = csr_pick_dir (places, &dir);
  if (r > 0)
    return csr_error_set (err, ENOENT,
                          "no directory for sandboxes: set XDG_RUNTIME_DIR, HOME or "
                          "CSRUN_SANDBOX_DIR");
  if (r < 0)
    return csr_error_set (err, ENOMEM, "sandbox directory");
  int fd = csr_trust_open_dir ("sandbox directory", dir, 0700, path, err);
  if (fd < 0)
    return fd;
  return fd;
}

static bool
is_id (const char *s)
{
  if (strlen (s) != CSR_SANDBOX_ID_LEN)
    return false;
  for (const char *p = s; *p; p++)
    if (!strchr ("0123456789abcdef", *p))
      return false;
  return true;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
csr_sandbox_list (int rootfd, char ***ids, size_t *n, csr_error **err)
{
  *ids = NULL;
  *n = 0;
  int fd = dup (rootfd);
  if (fd < 0)
    return csr_error_errno (err, "list sandboxes");
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return csr_error_errno (err, "list sandboxes");
    }
  rewinddir (d);
  size_t cap = 0;
  struct dirent *de;
  int rc = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (!is_id (de->d_name))
        continue;
      if (*n == cap)
        {
          cap = cap ? cap * 2 : 16;
          char **nv = realloc (*ids, cap * sizeof *nv);
          if (nv == NULL)
            {
              rc = csr_error_set (err, ENOMEM, "list sandboxes");
              break;
            }
          *ids = nv;
        }
      if (((*ids)[*n] = strdup (de->d_name)) == NULL)
        {
          rc = csr_error_set (err, ENOMEM, "list sandboxes");
          break;
        }
      (*n)++;
    }
  closedir (d);
  if (rc < 0)
    {
      csr_sandbox_list_free (*ids, *n);
      *ids = NULL;
      *n = 0;
      return rc;
    }
  if (*n)
    qsort (*ids, *n, sizeof **ids, cmp_str);
  return 0;
}

void
csr_sandbox_list_free (char **ids, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (ids[i]);
  free (ids);
}

int
csr_sandbox_find (int rootfd, const char *id_or_name, char id[CSR_SANDBOX_ID_LEN + 1],
                  csr_error **err)
{
  char **ids;
  size_t n;
  if (csr_sandbox_list (rootfd, &ids, &n, err) < 0)
    return -1;
  int found = -1, prefix = -1, nprefix = 0;
  size_t len = strlen (id_or_name);
  for (size_t i = 0; i < n && found < 0; i++)
    {
      if (strcmp (ids[i], id_or_name) == 0)
        {
          found = (int)i;
          break;
        }
      if (len >= 4 && strncmp (ids[i], id_or_name, len) == 0)
        {
          prefix = (int)i;
          nprefix++;
        }
      cleanup_close int dfd
          = openat (rootfd, ids[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct csr_sandbox_spec s = { 0 };
      csr_error *ignored = NULL;
      if (dfd >= 0 && csr_sandbox_spec_read (dfd, &s, &ignored) == 0 && s.name
          && strcmp (s.name, id_or_name) == 0)
        found = (int)i;
      csr_error_free (ignored);
      csr_sandbox_spec_release (&s);
    }
  if (found < 0 && nprefix == 1)
    found = prefix;
  if (found >= 0)
    snprintf (id, CSR_SANDBOX_ID_LEN + 1, "%s", ids[found]);
  csr_sandbox_list_free (ids, n);
  if (found < 0)
    return csr_error_set (err, ENOENT,
                          nprefix > 1 ? "sandbox '%s' is ambiguous (several ids)"
                                      : "no such sandbox: '%s'",
                          id_or_name);
  return 0;
}

bool
csr_sandbox_name_ok (const char *name)
{
  size_t n = strlen (name);
  return n > 0 && n <= 64
         && strspn (name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int
csr_sandbox_random_hex (char *out, size_t digits, csr_error **err)
{
  unsigned char b[32];
  size_t n = digits / 2;
  if (n > sizeof b || digits % 2)
    return csr_error_set (err, EINVAL, "random id: %zu digits", digits);
  if (getrandom (b, n, 0) != (ssize_t)n)
    return csr_error_errno (err, "random id");
  for (size_t i = 0; i < n; i++)
    snprintf (out + 2 * i, 3, "%02x", b[i]);
  out[digits] = '\0';
  return 0;
}

int
csr_sandbox_new_id (char id[CSR_SANDBOX_ID_LEN + 1], csr_error **err)
{
  return csr_sandbox_random_hex (id, CSR_SANDBOX_ID_LEN, err);
}

/* ------------------------------------------------------------ spec.json */

char *
csr_sandbox_spec_json (const struct csr_sandbox_spec *s, bool pretty, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, pretty, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "version", 1);
  csr_jgen_kv_str (&w, "id", s->id);
  if (s->name)
    csr_jgen_kv_str (&w, "name", s->name);
  if (s->rootfs)
    csr_jgen_kv_str (&w, "rootfs", s->rootfs);
  if (s->rootfs_dir)
    csr_jgen_kv_str (&w, "rootfs_dir", s->rootfs_dir);
  csr_jgen_kv_int (&w, "created", s->created);
  csr_jgen_kv_int (&w, "memory", (long long)s->memory);
  csr_jgen_kv_int (&w, "pids", (long long)s->pids);
  csr_jgen_kv_int (&w, "cpu_millis", (long long)s->cpu_millis);
  csr_jgen_kv_strv (&w, "env", (const char *const *)s->env);
  csr_jgen_kv_str (&w, "workdir", s->workdir ? s->workdir : "/work");
  csr_jgen_kv_int (&w, "idle_timeout_ms", (long long)(s->idle_timeout_s * 1000));
  csr_jgen_kv_int (&w, "ttl_ms", (long long)(s->ttl_s * 1000));
  csr_jgen_kv_str (&w, "net", s->host_net ? "host" : "none");
  csr_jgen_kv_str (&w, "idle_action", s->idle_checkpoint ? "checkpoint" : "remove");
  if (s->with)
    csr_jgen_kv_strv (&w, "with", (const char *const *)s->with);
  if (s->layer_dir)
    {
      csr_jgen_str (&w, "layer");
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "dir", s->layer_dir);
      csr_jgen_kv_str (&w, "digest", s->layer_digest ? s->layer_digest : "");
      csr_jgen_map_close (&w);
    }
  if (s->disk)
    csr_jgen_kv_int (&w, "disk", (long long)s->disk);
  csr_jgen_kv_int (&w, "keeper_pid", s->keeper_pid);
  csr_jgen_kv_str (&w, "mechanism", s->mechanism[0] ? s->mechanism : "none");
  csr_jgen_str (&w, "enforced");
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "memory");
  csr_jgen_bool (&w, s->memory_enforced);
  csr_jgen_str (&w, "pids");
  csr_jgen_bool (&w, s->pids_enforced);
  csr_jgen_str (&w, "cpu");
  csr_jgen_bool (&w, s->cpu_enforced);
  csr_jgen_map_close (&w);
  if (s->cgroup_v2)
    csr_jgen_kv_str (&w, "cgroup_v2", s->cgroup_v2);
  csr_jgen_str (&w, "cgroup_v1");
  csr_jgen_array_open (&w);
  for (size_t i = 0; i < s->n_cgroup_v1; i++)
    csr_jgen_str (&w, s->cgroup_v1[i]);
  csr_jgen_array_close (&w);
  csr_sandbox_ports_gen (&w, s, false);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the sandbox spec", NULL, err);
}

int
csr_sandbox_spec_write (int dirfd, const struct csr_sandbox_spec *s, csr_error **err)
{
  cleanup_free char *text = csr_sandbox_spec_json (s, true, err);
  if (text == NULL)
    return -1;
  return csr_trust_write_at (dirfd, "spec.json", text, strlen (text), 0600, err);
}

static char *
dup_str (yajl_val v)
{
  const char *s = csr_json_str (v);
  return s ? strdup (s) : NULL;
}

int
csr_sandbox_spec_read (int dirfd, struct csr_sandbox_spec *s, csr_error **err)
{
  memset (s, 0, sizeof *s);
  cleanup_free char *text = NULL;
  size_t len;
  if (csr_trust_read_at (dirfd, "spec.json", 1 << 20, &text, &len, err) < 0)
    return -1;
  if (csr_json_prescan (text, len, err) < 0)
    return -1;
  char ebuf[128];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (t == NULL || !YAJL_IS_OBJECT (t))
    return csr_error_set (err, EINVAL, "spec.json: invalid");
  const char *id = csr_json_str (csr_json_get (t, "id"));
  if (id == NULL || !is_id (id))
    return csr_error_set (err, EINVAL, "spec.json: no id");
  snprintf (s->id, sizeof s->id, "%s", id);
  s->name = dup_str (csr_json_get (t, "name"));
  s->rootfs = dup_str (csr_json_get (t, "rootfs"));
  s->rootfs_dir = dup_str (csr_json_get (t, "rootfs_dir"));
  s->workdir = dup_str (csr_json_get (t, "workdir"));
  s->cgroup_v2 = dup_str (csr_json_get (t, "cgroup_v2"));
  s->created = csr_json_int (t, "created", 0);
  s->memory = (uint64_t)csr_json_int (t, "memory", 0);
  s->pids = (uint64_t)csr_json_int (t, "pids", 0);
  s->cpu_millis = (uint64_t)csr_json_int (t, "cpu_millis", 0);
  s->idle_timeout_s = (double)csr_json_int (t, "idle_timeout_ms", 0) / 1000;
  s->ttl_s = (double)csr_json_int (t, "ttl_ms", 0) / 1000;
  s->keeper_pid = csr_json_int (t, "keeper_pid", 0);
  const char *net = csr_json_str (csr_json_get (t, "net"));
  s->host_net = net && strcmp (net, "host") == 0;
  const char *ia = csr_json_str (csr_json_get (t, "idle_action"));
  s->idle_checkpoint = ia && strcmp (ia, "checkpoint") == 0;
  const char *mech = csr_json_str (csr_json_get (t, "mechanism"));
  snprintf (s->mechanism, sizeof s->mechanism, "%s", mech ? mech : "none");
  yajl_val enf = csr_json_get (t, "enforced");
  s->memory_enforced = YAJL_IS_TRUE (csr_json_get (enf, "memory"));
  s->pids_enforced = YAJL_IS_TRUE (csr_json_get (enf, "pids"));
  s->cpu_enforced = YAJL_IS_TRUE (csr_json_get (enf, "cpu"));
  yajl_val v1 = csr_json_get (t, "cgroup_v1");
  for (size_t i = 0; v1 && YAJL_IS_ARRAY (v1) && i < v1->u.array.len && i < 16; i++)
    if ((s->cgroup_v1[s->n_cgroup_v1] = dup_str (v1->u.array.values[i])))
      s->n_cgroup_v1++;
  s->disk = (uint64_t)csr_json_int (t, "disk", 0);
  yajl_val layer = csr_json_get (t, "layer");
  s->layer_dir = dup_str (csr_json_get (layer, "dir"));
  s->layer_digest = dup_str (csr_json_get (layer, "digest"));
  yajl_val with = csr_json_get (t, "with");
  if (with && YAJL_IS_ARRAY (with) && with->u.array.len > 0)
    {
      size_t nw = with->u.array.len;
      if ((s->with = calloc (nw + 1, sizeof *s->with)) == NULL)
        return csr_error_set (err, ENOMEM, "spec.json");
      for (size_t i = 0, j = 0; i < nw; i++)
        if ((s->with[j] = dup_str (with->u.array.values[i])))
          j++;
    }
  yajl_val env = csr_json_get (t, "env");
  size_t ne = env && YAJL_IS_ARRAY (env) ? env->u.array.len : 0;
  s->env = calloc (ne + 1, sizeof *s->env);
  if (s->env == NULL)
    return csr_error_set (err, ENOMEM, "spec.json");
  for (size_t i = 0, j = 0; i < ne; i++)
    if ((s->env[j] = dup_str (env->u.array.values[i])))
      j++;
  if (csr_sandbox_ports_read (t, s, err) < 0)
    {
      csr_sandbox_spec_release (s);
      return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ liveness, clean-up */

int
csr_sandbox_keeper_alive (int dirfd)
{
  cleanup_close int fd = openat (dirfd, "keeper.lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return 0;
  if (flock (fd, LOCK_EX | LOCK_NB) == 0)
    return 0; /* nobody holds it: closing the fd drops our lock */
  return errno == EWOULDBLOCK ? 1 : 0;
}

int
csr_sandbox_reap (int rootfd, const char *id, bool force, csr_error **err)
{
  if (!is_id (id))
    return csr_error_set (err, EINVAL, "not a sandbox id: '%s'", id);
  cleanup_close int dfd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    return errno == ENOENT ? 0 : csr_error_errno (err, "open sandbox %s", id);
  if (!force && csr_sandbox_keeper_alive (dfd))
    return csr_error_set (err, EBUSY, "sandbox %s: its keeper is running", id);
  struct csr_sandbox_spec s = { 0 };
  csr_error *e = NULL;
  if (csr_sandbox_spec_read (dfd, &s, &e) == 0)
    {
      /* The jail died with its keeper (parent-death signal); what is left
       * in its cgroup goes now, and the cgroup with it. */
      struct csr_cgroup *cg = NULL;
      if ((s.cgroup_v2 || s.n_cgroup_v1)
          && csr_cgroup_container_open (s.cgroup_v2, s.cgroup_v1, s.n_cgroup_v1, &cg, &e) == 0
          && cg)
        {
          if (csr_cgroup_delete (cg, &e) < 0)
            {
              csr_cgroup_free (cg);
              csr_sandbox_spec_release (&s);
              csr_error_set (err, e->status, "sandbox %s: remove its cgroup: %s", id, e->msg);
              csr_error_free (e);
              return -1;
            }
          csr_cgroup_free (cg);
        }
    }
  csr_error_freep (&e);
  csr_sandbox_spec_release (&s);
  /* overlayfs leaves its work directory with mode 0. */
  if (fchmodat (dfd, "ovl-work/work", 0700, 0) < 0 && errno != ENOENT)
    csr_error_set (&e, errno, "ignored");
  csr_error_freep (&e);
  cleanup_free char *path = NULL;
  /* Remove through the root's descriptor: the path stays inside it. */
  if (asprintf (&path, "/proc/self/fd/%d/%s", rootfd, id) < 0)
    return csr_error_set (err, ENOMEM, "remove sandbox %s", id);
  if (csr_rm_rf (path, err) < 0)
    return csr_error_wrap (err, "remove sandbox %s", id);
  return 0;
}
