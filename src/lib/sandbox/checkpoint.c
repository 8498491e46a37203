/* csrun — the checkpoint store (checkpoint.h): the directory, ids,
 * checkpoint.json and the archive's spec.json, writing a checkpoint
 * atomically, removing, collecting, and opening one for a restore. */
#include "config.h"
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../rootfs/layer.h"
#include "../util/cleanup.h"
#include "../util/datadir.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/trust.h"

#define META_MAX (1 << 20)
#define TMP_PREFIX ".tmp-"
#define RM_PREFIX ".rm-"
#define DEBRIS_AGE_S 10

/* ------------------------------------------------------------ stats */

void
csr_ckpt_stats_release (struct csr_ckpt_stats *s)
{
  for (size_t i = 0; i < s->n_notes; i++)
    free (s->notes[i]);
  memset (s, 0, sizeof *s);
}

void
csr_ckpt_stats_note (struct csr_ckpt_stats *s, const char *fmt, ...)
{
  s->n_notes_total++;
  if (s->n_notes >= CSR_CKPT_MAX_NOTES)
    return;
  va_list ap;
  va_start (ap, fmt);
  char *m = NULL;
  if (vasprintf (&m, fmt, ap) >= 0)
    {
      if (strlen (m) > 512)
        strcpy (m + 509, "...");
      s->notes[s->n_notes++] = m;
    }
  va_end (ap);
}

void
csr_ckpt_stats_gen (struct csr_jgen *w, const struct csr_ckpt_stats *s)
{
  csr_jgen_str (w, "archive");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "file", CSR_CKPT_ARCHIVE);
  csr_jgen_kv_int (w, "bytes", (long long)s->archive_bytes);
  csr_jgen_kv_str (w, "sha256", s->sha256);
  csr_jgen_map_close (w);
  csr_jgen_str (w, "layer");
  csr_jgen_map_open (w);
  csr_jgen_kv_int (w, "files", (long long)s->files);
  csr_jgen_kv_int (w, "dirs", (long long)s->dirs);
  csr_jgen_kv_int (w, "symlinks", (long long)s->symlinks);
  csr_jgen_kv_int (w, "hardlinks", (long long)s->hardlinks);
  csr_jgen_kv_int (w, "whiteouts", (long long)s->whiteouts);
  csr_jgen_kv_int (w, "opaque_dirs", (long long)s->opaque);
  csr_jgen_kv_int (w, "fifos", (long long)s->fifos);
  csr_jgen_kv_int (w, "sparse_files", (long long)s->sparse);
  csr_jgen_kv_int (w, "bytes", (long long)s->bytes);
  csr_jgen_map_close (w);
  csr_jgen_str (w, "not_saved");
  csr_jgen_array_open (w);
  for (size_t i = 0; i < s->n_notes; i++)
    csr_jgen_str (w, s->notes[i]);
  csr_jgen_array_close (w);
  csr_jgen_kv_int (w, "not_saved_total", (long long)s->n_notes_total);
}

void
csr_ckpt_stats_read (yajl_val o, struct csr_ckpt_stats *s)
{
  memset (s, 0, sizeof *s);
  yajl_val a = csr_json_get (o, "archive"), l = csr_json_get (o, "layer");
  s->archive_bytes = csr_json_u64 (a, "bytes");
  const char *sha = csr_json_str (csr_json_get (a, "sha256"));
  if (sha && strlen (sha) == CSR_SHA256_HEX_LEN)
    memcpy (s->sha256, sha, CSR_SHA256_HEX_LEN + 1);
  s->files = csr_json_u64 (l, "files");
  s->dirs = csr_json_u64 (l, "dirs");
  s->symlinks = csr_json_u64 (l, "symlinks");
  s->hardlinks = csr_json_u64 (l, "hardlinks");
  s->whiteouts = csr_json_u64 (l, "whiteouts");
  s->opaque = csr_json_u64 (l, "opaque_dirs");
  s->fifos = csr_json_u64 (l, "fifos");
  s->sparse = csr_json_u64 (l, "sparse_files");
  s->bytes = csr_json_u64 (l, "bytes");
  yajl_val n = csr_json_get (o, "not_saved");
  for (size_t i = 0; n && YAJL_IS_ARRAY (n) && i < n->u.array.len && i < CSR_CKPT_MAX_NOTES; i++)
    {
      const char *t = csr_json_str (n->u.array.values[i]);
      if (t && (s->notes[s->n_notes] = strdup (t)))
        s->n_notes++;
    }
  s->n_notes_total = csr_json_u64 (o, "not_saved_total");
  if (s->n_notes_total < s->n_notes)
    s->n_notes_total = s->n_notes;
}

/* ------------------------------------------------------------ spec.json (in the archive) */

void
csr_ckpt_spec_release (struct csr_ckpt_spec *c)
{
  csr_sandbox_spec_release (&c->s);
  free (c->rootfs_sha256);
  c->rootfs_sha256 = NULL;
}

char *
csr_ckpt_spec_json (const struct csr_ckpt_spec *c, csr_error **err)
{
  const struct csr_sandbox_spec *s = &c->s;
  struct csr_jgen w;
  if (csr_jgen_init (&w, true, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "version", 1);
  csr_jgen_kv_str (&w, "kind", "csrun-sandbox-checkpoint");
  csr_jgen_str (&w, "sandbox");
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "id", s->id);
  if (s->name)
    csr_jgen_kv_str (&w, "name", s->name);
  csr_jgen_kv_int (&w, "created", s->created);
  csr_jgen_map_close (&w);
  csr_jgen_str (&w, "limits");
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "memory", (long long)s->memory);
  csr_jgen_kv_int (&w, "pids", (long long)s->pids);
  csr_jgen_kv_int (&w, "cpu_millis", (long long)s->cpu_millis);
  csr_jgen_map_close (&w);
  csr_jgen_kv_strv (&w, "env", (const char *const *)s->env);
  csr_jgen_kv_str (&w, "workdir", s->workdir ? s->workdir : "/work");
  csr_jgen_kv_int (&w, "idle_timeout_ms", (long long)(s->idle_timeout_s * 1000));
  csr_jgen_kv_int (&w, "ttl_ms", (long long)(s->ttl_s * 1000));
  csr_jgen_kv_str (&w, "idle_action", s->idle_checkpoint ? "checkpoint" : "remove");
  csr_jgen_kv_str (&w, "net", s->host_net ? "host" : "none");
  /* issue 15: the package layer and the cap are the restored sandbox's too. */
  if (s->with)
    csr_jgen_kv_strv (&w, "with", (const char *const *)s->with);
  if (s->disk)
    csr_jgen_kv_int (&w, "disk", (long long)s->disk);
  csr_jgen_str (&w, "rootfs");
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "source", s->rootfs);
  if (s->rootfs_dir)
    csr_jgen_kv_str (&w, "dir", s->rootfs_dir);
  csr_jgen_str (&w, "sha256");
  if (c->rootfs_sha256)
    csr_jgen_str (&w, c->rootfs_sha256);
  else
    yajl_gen_null (w.g);
  csr_jgen_map_close (&w);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the checkpoint's spec", NULL, err);
}

static int
dup_opt (yajl_val o, const char *key, char **out)
{
  const char *v = csr_json_str (csr_json_get (o, key));
  *out = NULL;
  if (v && (*out = strdup (v)) == NULL)
    return -1;
  return 0;
}

static bool
is_hex (const char *s, size_t len)
{
  if (strlen (s) != len)
    return false;
  for (const char *p = s; *p; p++)
    if (!strchr ("0123456789abcdef", *p))
      return false;
  return true;
}

/* issue 15: --with's packages and --disk's cap, if the checkpoint has them. */
static int
parse_layers (yajl_val t, struct csr_sandbox_spec *s, csr_error **err)
{
  yajl_val with = csr_json_get (t, "with");
  size_t nw = with && YAJL_IS_ARRAY (with) ? with->u.array.len : 0;
  if (nw > CSR_LAYER_MAX_PACKAGES)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: too many packages (with)");
  if (nw > 0 && (s->with = calloc (nw + 1, sizeof *s->with)) == NULL)
    return csr_error_set (err, ENOMEM, "spec.json");
  for (size_t i = 0; i < nw; i++)
    {
      const char *p = csr_json_str (with->u.array.values[i]);
      if (p == NULL || !csr_layer_valid_name (p))
        return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid package (with)");
      if ((s->with[i] = strdup (p)) == NULL)
        return csr_error_set (err, ENOMEM, "spec.json");
    }
  s->disk = csr_json_u64 (t, "disk");
  if (s->disk && (s->disk < (1ULL << 20) || s->disk > (1ULL << 40)))
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid disk");
  return 0;
}

int
csr_ckpt_spec_parse (const char *text, size_t len, struct csr_ckpt_spec *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  if (csr_json_prescan (text, len, err) < 0)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid");
  char ebuf[128];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (text, ebuf, sizeof ebuf);
  yajl_val sb = csr_json_get (t, "sandbox"), lim = csr_json_get (t, "limits"),
           rfs = csr_json_get (t, "rootfs");
  yajl_val ver = csr_json_get (t, "version");
  const char *kind = csr_json_str (csr_json_get (t, "kind"));
  const char *id = csr_json_str (csr_json_get (sb, "id"));
  if (t == NULL || !YAJL_IS_OBJECT (t) || kind == NULL
      || strcmp (kind, "csrun-sandbox-checkpoint") != 0 || id == NULL
      || !is_hex (id, CSR_SANDBOX_ID_LEN) || !YAJL_IS_OBJECT (lim) || !YAJL_IS_OBJECT (rfs))
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: not a csrun checkpoint's spec");
  if (!ver || !YAJL_IS_INTEGER (ver) || YAJL_GET_INTEGER (ver) != 1)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED,
                          "spec.json: a checkpoint format this csrun does not know (version)");
  struct csr_sandbox_spec *s = &c->s;
  snprintf (s->id, sizeof s->id, "%s", id);
  const char *wd = csr_json_str (csr_json_get (t, "workdir"));
  if (wd == NULL || wd[0] != '/' || strstr (wd, "/..") || strlen (wd) > 1024)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid workdir");
  const char *name = csr_json_str (csr_json_get (sb, "name"));
  if (name && !csr_sandbox_name_ok (name))
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid name");
  const char *src = csr_json_str (csr_json_get (rfs, "source"));
  if (src == NULL || src[0] != '/')
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: no rootfs");
  const char *sha = csr_json_str (csr_json_get (rfs, "sha256"));
  if (sha && !is_hex (sha, CSR_SHA256_HEX_LEN))
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid rootfs digest");
  yajl_val env = csr_json_get (t, "env");
  size_t ne = env && YAJL_IS_ARRAY (env) ? env->u.array.len : 0;
  if (ne > CSR_SANDBOX_MAX_ENV + 16)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: too many environment variables");
  s->env = calloc (ne + 1, sizeof *s->env);
  if (s->env == NULL || dup_opt (sb, "name", &s->name) < 0 || dup_opt (t, "workdir", &s->workdir)
      || dup_opt (rfs, "source", &s->rootfs) < 0 || dup_opt (rfs, "dir", &s->rootfs_dir) < 0
      || dup_opt (rfs, "sha256", &c->rootfs_sha256) < 0)
    return csr_error_set (err, ENOMEM, "spec.json");
  for (size_t i = 0, j = 0; i < ne; i++)
    {
      const char *kv = csr_json_str (env->u.array.values[i]);
      if (kv == NULL || strchr (kv, '=') == NULL || kv[0] == '=')
        return csr_error_set (err, CSR_CKPT_E_DAMAGED, "spec.json: invalid environment");
      if ((s->env[j++] = strdup (kv)) == NULL)
        return csr_error_set (err, ENOMEM, "spec.json");
    }
  s->created = csr_json_int (sb, "created", 0);
  s->memory = csr_json_u64 (lim, "memory");
  s->pids = csr_json_u64 (lim, "pids");
  s->cpu_millis = csr_json_u64 (lim, "cpu_millis");
  s->idle_timeout_s = (double)csr_json_u64 (t, "idle_timeout_ms") / 1000;
  s->ttl_s = (double)csr_json_u64 (t, "ttl_ms") / 1000;
  const char *ia = csr_json_str (csr_json_get (t, "idle_action"));
  s->idle_checkpoint = ia && strcmp (ia, "checkpoint") == 0;
  const char *net = csr_json_str (csr_json_get (t, "net"));
  s->host_net = net && strcmp (net, "host") == 0;
  return parse_layers (t, s, err);
}

/* ------------------------------------------------------------ checkpoint.json */

void
csr_ckpt_info_release (struct csr_ckpt_info *i)
{
  free (i->sandbox_name);
  free (i->rootfs_source);
  free (i->rootfs_sha256);
  free (i->sessions);
  csr_ckpt_stats_release (&i->stats);
  memset (i, 0, sizeof *i);
}

void
csr_ckpt_info_gen (struct csr_jgen *w, const struct csr_ckpt_info *i)
{
  csr_jgen_kv_int (w, "version", 1);
  csr_jgen_kv_str (w, "id", i->id);
  csr_jgen_kv_int (w, "created", i->created);
  csr_jgen_kv_int (w, "expires", i->expires);
  csr_jgen_kv_str (w, "trigger", i->trigger);
  csr_jgen_str (w, "sandbox");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "id", i->sandbox_id);
  if (i->sandbox_name)
    csr_jgen_kv_str (w, "name", i->sandbox_name);
  csr_jgen_map_close (w);
  csr_jgen_str (w, "rootfs");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "source", i->rootfs_source);
  csr_jgen_str (w, "sha256");
  if (i->rootfs_sha256)
    csr_jgen_str (w, i->rootfs_sha256);
  else
    yajl_gen_null (w->g);
  csr_jgen_map_close (w);
  csr_ckpt_stats_gen (w, &i->stats);
  /* The sessions: text we wrote (a JSON array), written back as it is. */
  char ebuf[64];
  cleanup_yajl_val yajl_val ss
      = i->sessions ? yajl_tree_parse (i->sessions, ebuf, sizeof ebuf) : NULL;
  csr_jgen_str (w, "sessions");
  if (ss && YAJL_IS_ARRAY (ss))
    csr_jgen_tree (w, ss);
  else
    {
      csr_jgen_array_open (w);
      csr_jgen_array_close (w);
    }
}

char *
csr_ckpt_info_json (const struct csr_ckpt_info *i, bool pretty, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, pretty, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_ckpt_info_gen (&w, i);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, CSR_CKPT_META, NULL, err);
}

static int
info_parse (const char *text, size_t len, const char *id, struct csr_ckpt_info *i, csr_error **err)
{
  memset (i, 0, sizeof *i);
  if (csr_json_prescan (text, len, NULL) < 0)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "checkpoint %s: %s is invalid", id,
                          CSR_CKPT_META);
  char ebuf[128];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (text, ebuf, sizeof ebuf);
  const char *tid = csr_json_str (csr_json_get (t, "id"));
  yajl_val sb = csr_json_get (t, "sandbox"), rfs = csr_json_get (t, "rootfs");
  const char *sid = csr_json_str (csr_json_get (sb, "id"));
  if (t == NULL || tid == NULL || strcmp (tid, id) != 0 || sid == NULL
      || !is_hex (sid, CSR_SANDBOX_ID_LEN))
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "checkpoint %s: %s is invalid", id,
                          CSR_CKPT_META);
  snprintf (i->id, sizeof i->id, "%s", id);
  snprintf (i->sandbox_id, sizeof i->sandbox_id, "%s", sid);
  i->created = csr_json_int (t, "created", 0);
  i->expires = csr_json_int (t, "expires", 0);
  const char *tr = csr_json_str (csr_json_get (t, "trigger"));
  snprintf (i->trigger, sizeof i->trigger, "%s", tr ? tr : "command");
  if (dup_opt (sb, "name", &i->sandbox_name) < 0 || dup_opt (rfs, "source", &i->rootfs_source) < 0
      || dup_opt (rfs, "sha256", &i->rootfs_sha256) < 0)
    return csr_error_set (err, ENOMEM, "%s", CSR_CKPT_META);
  csr_ckpt_stats_read (t, &i->stats);
  yajl_val ss = csr_json_get (t, "sessions");
  if (ss && YAJL_IS_ARRAY (ss) && ss->u.array.len > 0)
    {
      struct csr_jgen w;
      if (csr_jgen_init (&w, false, err) < 0)
        return -1;
      csr_jgen_tree (&w, ss);
      if ((i->sessions = csr_jgen_finish (&w, CSR_CKPT_META, NULL, err)) == NULL)
        return -1;
    }
  if (i->stats.sha256[0] == '\0')
    return csr_error_set (err, CSR_CKPT_E_DAMAGED, "checkpoint %s: %s has no digest", id,
                          CSR_CKPT_META);
  return 0;
}

/* ------------------------------------------------------------ the directory, ids */

int
csr_ckpt_root (bool create, char **path, csr_error **err)
{
  static const struct csr_dir_place places[] = {
    { "CSRUN_CHECKPOINT_DIR", NULL },
    { "XDG_DATA_HOME", "/csrun/checkpoints" },
    { NULL, "/var/lib/csrun/checkpoints" },
    { "HOME", "/.local/share/csrun/checkpoints" },
    { NULL, NULL },
  };
  cleanup_free char *dir = NULL;
  int r = csr_pick_dir (places, &dir);
  if (r > 0)
    return csr_error_set (err, ENOENT,
                          "no directory for checkpoints: set HOME, XDG_DATA_HOME or "
                          "CSRUN_CHECKPOINT_DIR");
  if (r < 0)
    return csr_error_set (err, ENOMEM, "checkpoint directory");
  return csr_trust_open_dir ("checkpoint directory", dir, create ? 0700 : 0, path, err);
}

int
csr_ckpt_new_id (char id[CSR_CKPT_ID_LEN + 1], csr_error **err)
{
  return csr_sandbox_random_hex (id, CSR_CKPT_ID_LEN, err);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* Names in CKFD: the ids, or with DEBRIS the .tmp-ID and .rm-ID ones. */
static int
list_names (int ckfd, bool debris, char ***out, size_t *n, csr_error **err)
{
  *out = NULL;
  *n = 0;
  DIR *d = csr_fdopendir_or_close (fcntl (ckfd, F_DUPFD_CLOEXEC, 3));
  if (d == NULL)
    return csr_error_errno (err, "list checkpoints");
  rewinddir (d);
  size_t cap = 0;
  struct dirent *de;
  int rc = 0;
  while ((de = readdir (d)) != NULL)
    {
      const char *nm = de->d_name;
      bool want = debris ? strncmp (nm, TMP_PREFIX, strlen (TMP_PREFIX)) == 0
                               || strncmp (nm, RM_PREFIX, strlen (RM_PREFIX)) == 0
                         : is_hex (nm, CSR_CKPT_ID_LEN);
      if (!want)
        continue;
      if (*n == cap)
        {
          cap = cap ? cap * 2 : 16;
          char **nv = realloc (*out, cap * sizeof *nv);
          if (nv == NULL)
            {
              rc = csr_error_set (err, ENOMEM, "list checkpoints");
              break;
            }
          *out = nv;
        }
      if (((*out)[*n] = strdup (nm)) == NULL)
        {
          rc = csr_error_set (err, ENOMEM, "list checkpoints");
          break;
        }
      (*n)++;
    }
  closedir (d);
  if (rc < 0)
    {
      csr_sandbox_list_free (*out, *n);
      *out = NULL;
      *n = 0;
      return -1;
    }
  if (*n)
    qsort (*out, *n, sizeof **out, cmp_str);
  return 0;
}

int
csr_ckpt_list (int ckfd, char ***ids, size_t *n, csr_error **err)
{
  return list_names (ckfd, false, ids, n, err);
}

int
csr_ckpt_find (int ckfd, const char *id_or_prefix, char id[CSR_CKPT_ID_LEN + 1], csr_error **err)
{
  char **ids;
  size_t n;
  if (csr_ckpt_list (ckfd, &ids, &n, err) < 0)
    return -1;
  size_t len = strlen (id_or_prefix);
  int found = -1, nprefix = 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp (ids[i], id_or_prefix) == 0)
      {
        found = (int)i;
        nprefix = 1;
        break;
      }
    else if (len >= 4 && strncmp (ids[i], id_or_prefix, len) == 0)
      {
        found = (int)i;
        nprefix++;
      }
  if (found >= 0 && nprefix == 1)
    snprintf (id, CSR_CKPT_ID_LEN + 1, "%s", ids[found]);
  csr_sandbox_list_free (ids, n);
  if (found < 0 || nprefix != 1)
    return csr_error_set (err, ENOENT,
                          nprefix > 1 ? "checkpoint '%s' is ambiguous (several ids)"
                                      : "no such checkpoint: '%s'",
                          id_or_prefix);
  return 0;
}

static int
open_ckpt_dir (int ckfd, const char *id, csr_error **err)
{
  csr_error *e = NULL;
  int fd = csr_trust_open_subdir (ckfd, "checkpoint", id, 0, &e);
  if (fd >= 0)
    return fd;
  if (fd != CSR_TRUST_REFUSED && e->status == ENOENT)
    csr_error_set (err, ENOENT, "no such checkpoint: '%s'", id);
  else
    csr_error_set (err, e->status, "%s", e->msg);
  csr_error_free (e);
  return fd;
}

int
csr_ckpt_info_read (int ckfd, const char *id, struct csr_ckpt_info *i, csr_error **err)
{
  memset (i, 0, sizeof *i);
  cleanup_close int dfd = open_ckpt_dir (ckfd, id, err);
  if (dfd < 0)
    return -1;
  cleanup_free char *text = NULL;
  size_t len;
  csr_error *e = NULL;
  if (csr_trust_read_at (dfd, CSR_CKPT_META, META_MAX, &text, &len, &e) < 0)
    {
      int st = e->status == ENOENT ? CSR_CKPT_E_DAMAGED : e->status;
      csr_error_set (err, st, "checkpoint %s: %s", id, e->msg);
      csr_error_free (e);
      return -1;
    }
  return info_parse (text, len, id, i, err);
}

/* Take the lock of the checkpoint directory DFD (OP: LOCK_SH or LOCK_EX,
 * never waiting); its fd, or -1 (EWOULDBLOCK: someone holds it). */
static int
take_lock (int dfd, int op)
{
  int fd = openat (dfd, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (flock (fd, op | LOCK_NB) < 0)
    {
      int saved = errno;
      close (fd);
      errno = saved;
      return -1;
    }
  return fd;
}

/* rm -rf CKFD/NAME (no symlink followed, nothing outside CKFD). */
static int
remove_name (int ckfd, const char *name, csr_error **err)
{
  char path[64 + CSR_CKPT_ID_LEN];
  snprintf (path, sizeof path, "/proc/self/fd/%d/%s", ckfd, name);
  return csr_rm_rf (path, err);
}

/* With its lock held: renamed out of sight (.rm-ID), then removed. */
static int
remove_locked (int ckfd, const char *id, csr_error **err)
{
  char gone[sizeof RM_PREFIX + CSR_CKPT_ID_LEN];
  snprintf (gone, sizeof gone, RM_PREFIX "%s", id);
  if (renameat (ckfd, id, ckfd, gone) < 0)
    return csr_error_errno (err, "remove checkpoint %s", id);
  if (remove_name (ckfd, gone, err) < 0)
    return csr_error_wrap (err, "remove checkpoint %s", id);
  return 0;
}

int
csr_ckpt_remove (int ckfd, const char *id, csr_error **err)
{
  cleanup_close int dfd = open_ckpt_dir (ckfd, id, err);
  if (dfd < 0)
    return -1;
  cleanup_close int lk = take_lock (dfd, LOCK_EX);
  if (lk < 0 && errno == EWOULDBLOCK)
    return csr_error_set (err, EBUSY, "checkpoint %s is in use (being restored)", id);
  return remove_locked (ckfd, id, err);
}

/* A .tmp-ID or .rm-ID whose writer (or remover) is gone. */
static void
collect_debris (int ckfd, int64_t now)
{
  char **names;
  size_t n;
  if (list_names (ckfd, true, &names, &n, NULL) < 0)
    return;
  for (size_t i = 0; i < n; i++)
    {
      cleanup_close int dfd
          = openat (ckfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (dfd < 0 || fstat (dfd, &st) < 0 || st.st_uid != geteuid ()
          || now - (int64_t)st.st_mtime < DEBRIS_AGE_S)
        continue;
      cleanup_close int lk = take_lock (dfd, LOCK_EX);
      if (lk < 0 && errno == EWOULDBLOCK)
        continue;
      csr_error *e = NULL;
      remove_name (ckfd, names[i], &e);
      csr_error_free (e);
    }
  csr_sandbox_list_free (names, n);
}

int
csr_ckpt_collect (int ckfd, int64_t now, char ***removed, size_t *n_removed, csr_error **err)
{
  if (removed)
    {
      *removed = NULL;
      *n_removed = 0;
    }
  char **ids;
  size_t n;
  if (csr_ckpt_list (ckfd, &ids, &n, err) < 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    {
      struct csr_ckpt_info info;
      csr_error *e = NULL;
      int r = csr_ckpt_info_read (ckfd, ids[i], &info, &e);
      bool expired = r == 0 && info.expires > 0 && info.expires <= now;
      csr_ckpt_info_release (&info);
      csr_error_freep (&e);
      if (!expired)
        continue;
      if (csr_ckpt_remove (ckfd, ids[i], &e) < 0)
        {
          if (e->status != EBUSY && e->status != ENOENT && rc == 0)
            {
              rc = -1;
              csr_error_set (err, e->status, "%s", e->msg);
            }
          csr_error_free (e);
          continue;
        }
      if (removed)
        {
          char **nv = realloc (*removed, (*n_removed + 1) * sizeof *nv);
          if (nv)
            {
              *removed = nv;
              nv[(*n_removed)++] = ids[i];
              ids[i] = NULL;
            }
        }
    }
  csr_sandbox_list_free (ids, n);
  collect_debris (ckfd, now);
  return rc;
}

/* ------------------------------------------------------------ writing */

int
csr_ckpt_writer_open (int ckfd, struct csr_ckpt_writer *w, csr_error **err)
{
  memset (w, 0, sizeof *w);
  w->ckfd = ckfd;
  w->tmpfd = w->lockfd = w->archive_fd = -1;
  char tmp[sizeof TMP_PREFIX + CSR_CKPT_ID_LEN];
  for (int tries = 0;; tries++)
    {
      if (csr_ckpt_new_id (w->id, err) < 0)
        return -1;
      snprintf (tmp, sizeof tmp, TMP_PREFIX "%s", w->id);
      if (faccessat (ckfd, w->id, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        continue;
      if (mkdirat (ckfd, tmp, 0700) == 0)
        break;
      if (errno != EEXIST || tries > 8)
        return csr_error_errno (err, "create a checkpoint in the checkpoint directory");
    }
  w->tmpfd = openat (ckfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (w->tmpfd >= 0)
    w->lockfd = openat (w->tmpfd, "lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (w->lockfd < 0 || flock (w->lockfd, LOCK_EX) < 0)
    {
      csr_error_errno (err, "create the checkpoint's lock");
      csr_ckpt_writer_abort (w);
      return -1;
    }
  w->archive_fd = openat (w->tmpfd, CSR_CKPT_ARCHIVE,
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (w->archive_fd < 0)
    {
      csr_error_errno (err, "create the checkpoint's archive");
      csr_ckpt_writer_abort (w);
      return -1;
    }
  return 0;
}

int
csr_ckpt_writer_commit (struct csr_ckpt_writer *w, const struct csr_ckpt_info *info,
                        csr_error **err)
{
  cleanup_free char *text = csr_ckpt_info_json (info, true, err);
  if (text == NULL)
    return -1;
  char tmp[sizeof TMP_PREFIX + CSR_CKPT_ID_LEN];
  snprintf (tmp, sizeof tmp, TMP_PREFIX "%s", w->id);
  if (fsync (w->archive_fd) < 0)
    return csr_error_errno (err, "sync the checkpoint's archive");
  if (close (steal_fd (&w->archive_fd)) < 0)
    return csr_error_errno (err, "close the checkpoint's archive");
  if (csr_trust_write_at (w->tmpfd, CSR_CKPT_META, text, strlen (text), 0600, err) < 0)
    return -1;
  if (renameat (w->ckfd, tmp, w->ckfd, w->id) < 0)
    return csr_error_errno (err, "publish the checkpoint");
  if (fsync (w->ckfd) < 0)
    {
      /* Published but maybe not durable: take it back rather than claim it. */
      int saved = errno;
      remove_locked (w->ckfd, w->id, NULL);
      errno = saved;
      return csr_error_errno (err, "sync the checkpoint directory");
    }
  close (steal_fd (&w->tmpfd));
  close (steal_fd (&w->lockfd));
  return 0;
}

void
csr_ckpt_writer_abort (struct csr_ckpt_writer *w)
{
  if (w->archive_fd >= 0)
    close (steal_fd (&w->archive_fd));
  if (w->tmpfd >= 0)
    {
      char tmp[sizeof TMP_PREFIX + CSR_CKPT_ID_LEN];
      snprintf (tmp, sizeof tmp, TMP_PREFIX "%s", w->id);
      csr_error *e = NULL;
      remove_name (w->ckfd, tmp, &e);
      csr_error_free (e);
      close (steal_fd (&w->tmpfd));
    }
  if (w->lockfd >= 0)
    close (steal_fd (&w->lockfd));
}

/* ------------------------------------------------------------ restore */

int
csr_ckpt_open_for_restore (int ckfd, const char *id, int64_t now, struct csr_ckpt_info *i,
                           int *lockfd, csr_error **err)
{
  *lockfd = -1;
  memset (i, 0, sizeof *i);
  cleanup_close int dfd = open_ckpt_dir (ckfd, id, err);
  if (dfd < 0)
    return -1;
  cleanup_close int lk = take_lock (dfd, LOCK_SH);
  if (lk < 0)
    return errno == EWOULDBLOCK
               ? csr_error_set (err, EBUSY, "checkpoint %s is being removed", id)
               : csr_error_set (err, CSR_CKPT_E_DAMAGED, "checkpoint %s: no lock file", id);
  if (csr_ckpt_info_read (ckfd, id, i, err) < 0)
    return -1;
  if (i->expires > 0 && i->expires <= now)
    {
      char when[32];
      time_t t = (time_t)i->expires;
      struct tm tm;
      gmtime_r (&t, &tm);
      strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
      return csr_error_set (err, CSR_CKPT_E_EXPIRED, "checkpoint %s expired at %s", id, when);
    }
  cleanup_close int fd
      = openat (dfd, CSR_CKPT_ARCHIVE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return csr_error_set (err, errno == ENOENT ? CSR_CKPT_E_DAMAGED : errno,
                          "checkpoint %s: its archive: %s", id, strerror (errno));
  if (csr_trust_check_entry (&st, true, CSR_CKPT_ARCHIVE, err) < 0)
    return csr_error_wrap (err, "checkpoint %s", id);
  if ((uint64_t)st.st_size != i->stats.archive_bytes)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED,
                          "checkpoint %s is damaged: its archive has %lld bytes, %llu were "
                          "written (%s)",
                          id, (long long)st.st_size, (unsigned long long)i->stats.archive_bytes,
                          (uint64_t)st.st_size < i->stats.archive_bytes ? "truncated" : "grown");
  char sha[CSR_SHA256_HEX_LEN + 1];
  if (csr_sha256_fd (fd, sha, err) < 0)
    return csr_error_wrap (err, "checkpoint %s", id);
  if (strcmp (sha, i->stats.sha256) != 0)
    return csr_error_set (err, CSR_CKPT_E_DAMAGED,
                          "checkpoint %s is damaged: its archive's sha256 is %.12s..., "
                          "%.12s... was written",
                          id, sha, i->stats.sha256);
  if (lseek (fd, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "checkpoint %s", id);
  *lockfd = steal_fd (&lk);
  return steal_fd (&fd);
}
