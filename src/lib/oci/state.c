/* csrun — the OCI runtime's state directory (see state.h). */
#include "config.h"
#include "state.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/json.h"

#define OCI_ID_MAX 1024
#define STATE_FILE "state.json"
#define LOCK_FILE "lock"
#define STATE_FORMAT_VERSION 1
/* Annotations can be large; anything beyond this is not a file we wrote. */
#define STATE_FILE_MAX (16 * 1024 * 1024)
#define CGROUP_V1_MAX (sizeof ((struct oci_state *)0)->cgroup_v1 / sizeof (char *) - 1)

/* ---------------------------------------------------------------- root, ids */

static bool
is_dir (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* ROOT made absolute (relative to the current directory, without resolving
 * symlinks, as runc does) and without trailing slashes. */
static char *
absolute_root (const char *root, csr_error **err)
{
  char *out = NULL;
  if (root[0] == '/')
    out = strdup (root);
  else
    {
      cleanup_free char *cwd = getcwd (NULL, 0);
      if (cwd == NULL)
        {
          csr_error_errno (err, "state root '%s': getcwd", root);
          return NULL;
        }
      if (asprintf (&out, "%s%s%s", cwd, strcmp (cwd, "/") == 0 ? "" : "/", root) < 0)
        out = NULL;
    }
  if (out == NULL)
    {
      csr_error_errno (err, "state root '%s'", root);
      return NULL;
    }
  size_t n = strlen (out);
  while (n > 1 && out[n - 1] == '/')
    out[--n] = '\0';
  return out;
}

int
oci_state_root (const char *root_opt, char **out, csr_error **err)
{
  cleanup_free char *root = NULL;
  if (root_opt != NULL)
    {
      if (*root_opt == '\0')
        return csr_error_set (err, EINVAL, "the state root (--root) is empty");
      root = absolute_root (root_opt, err);
      if (root == NULL)
        return -1;
    }
  else
    {
      const char *xdg = getenv ("XDG_RUNTIME_DIR");
      if (xdg != NULL && *xdg != '\0')
        {
          cleanup_free char *base = absolute_root (xdg, err);
          if (base == NULL)
            return -1;
          if (asprintf (&root, "%s%scsrun", base, strcmp (base, "/") == 0 ? "" : "/") < 0)
            {
              root = NULL;
              return csr_error_errno (err, "state root");
            }
        }
      else
        {
          root = strdup ("/run/csrun");
          if (root == NULL)
            return csr_error_errno (err, "state root");
        }
    }

  if (!is_dir (root))
    {
      /* The parents as ordinary directories, the root itself private. */
      char *slash = strrchr (root, '/');
      if (slash != NULL && slash != root)
        {
          *slash = '\0';
          int r = csr_mkdir_p (root, 0755, err);
          *slash = '/';
          if (r < 0)
            return csr_error_wrap (err, "state root '%s'", root);
        }
      if (mkdir (root, 0700) == 0)
        {
          if (chmod (root, 0700) < 0)
            return csr_error_errno (err, "state root '%s': chmod", root);
        }
      else if (errno != EEXIST || !is_dir (root))
        {
          if (errno == EEXIST)
            errno = ENOTDIR;
          return csr_error_errno (err, "state root '%s'", root);
        }
    }
  *out = steal_pointer (&root);
  return 0;
}

int
oci_id_check (const char *id, csr_error **err)
{
  if (id == NULL)
    return csr_error_set (err, EINVAL, "invalid container id '(null)'");
  size_t n = strlen (id);
  bool ok = n >= 1 && n <= OCI_ID_MAX && strcmp (id, ".") != 0 && strcmp (id, "..") != 0;
  for (size_t i = 0; ok && i < n; i++)
    {
      unsigned char c = (unsigned char)id[i];
      ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
           || c == '+' || c == '.' || c == '-';
    }
  if (!ok)
    {
      /* Don't echo a huge id back in full. */
      if (n > 64)
        return csr_error_set (err, EINVAL, "invalid container id '%.64s...' (%zu bytes)", id, n);
      return csr_error_set (err, EINVAL, "invalid container id '%s'", id);
    }
  return 0;
}

const char *
oci_status_name (enum oci_status s)
{
  switch (s)
    {
    case OCI_CREATING:
      return "creating";
    case OCI_CREATED:
      return "created";
    case OCI_RUNNING:
      return "running";
    case OCI_PAUSED:
      return "paused";
    case OCI_STOPPED:
      return "stopped";
    }
  return "unknown";
}

enum oci_status
oci_state_status (const struct oci_state *s)
{
  if (s->pid <= 0 || s->creating)
    return OCI_CREATING;
  bool zombie = false;
  uint64_t start = oci_pid_start_time (s->pid, &zombie);
  if (start == 0 || start != s->pid_start || zombie)
    return OCI_STOPPED;
  if (s->paused)
    return OCI_PAUSED;
  if (s->started)
    return OCI_RUNNING;
  return OCI_CREATED;
}

static char *
path_join3 (const char *a, const char *b, const char *c)
{
  char *out = NULL;
  if (asprintf (&out, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "") < 0)
    return NULL;
  return out;
}

char *
oci_state_dir (const char *root, const char *id)
{
  return path_join3 (root, id, NULL);
}

static int
no_such_container (const char *id, csr_error **err)
{
  return csr_error_set (err, ENOENT, "container '%s' does not exist", id);
}

int
oci_state_create_dir (const char *root, const char *id, csr_error **err)
{
  if (oci_id_check (id, err) < 0)
    return -1;
  cleanup_free char *dir = oci_state_dir (root, id);
  if (dir == NULL)
    return csr_error_errno (err, "container '%s'", id);
  if (mkdir (dir, 0700) < 0)
    {
      if (errno == EEXIST)
        return csr_error_set (err, EEXIST, "container '%s' already exists", id);
      return csr_error_errno (err, "container '%s': create '%s'", id, dir);
    }
  if (chmod (dir, 0700) < 0)
    return csr_error_errno (err, "container '%s': chmod '%s'", id, dir);
  return 0;
}

/* ---------------------------------------------------------------- save */

static void
gen_freep (yajl_gen *g)
{
  if (*g)
    yajl_gen_free (*g);
}
#define cleanup_gen __attribute__ ((cleanup (gen_freep)))

static void
tree_freep (yajl_val *v)
{
  if (*v)
    yajl_tree_free (*v);
}
#define cleanup_tree __attribute__ ((cleanup (tree_freep)))

static const char *
gen_status_text (yajl_gen_status st)
{
  switch (st)
    {
    case yajl_gen_invalid_string:
      return "a string is not valid UTF-8";
    case yajl_gen_invalid_number:
      return "invalid number";
    case yajl_gen_no_buf:
    case yajl_gen_status_ok:
    default:
      return "JSON generation failed";
    }
}

/* The generators below stop at the first error and keep it in *ST. */
static void
g_key (yajl_gen g, yajl_gen_status *st, const char *k)
{
  if (*st == yajl_gen_status_ok)
    *st = yajl_gen_string (g, (const unsigned char *)k, strlen (k));
}

static void
g_str (yajl_gen g, yajl_gen_status *st, const char *v)
{
  if (*st != yajl_gen_status_ok)
    return;
  *st = v ? yajl_gen_string (g, (const unsigned char *)v, strlen (v)) : yajl_gen_null (g);
}

static void
g_int (yajl_gen g, yajl_gen_status *st, long long v)
{
  if (*st == yajl_gen_status_ok)
    *st = yajl_gen_integer (g, v);
}

static void
g_bool (yajl_gen g, yajl_gen_status *st, bool v)
{
  if (*st == yajl_gen_status_ok)
    *st = yajl_gen_bool (g, v);
}

static void
g_annotations (yajl_gen g, yajl_gen_status *st, const struct oci_state *s)
{
  if (*st == yajl_gen_status_ok)
    *st = yajl_gen_map_open (g);
  for (size_t i = 0; i < s->n_annotations; i++)
    {
      g_str (g, st, s->annotation_keys[i]);
      g_str (g, st, s->annotation_values[i]);
    }
  if (*st == yajl_gen_status_ok)
    *st = yajl_gen_map_close (g);
}

int
oci_state_save (const char *root, const struct oci_state *s, csr_error **err)
{
  if (oci_id_check (s->id, err) < 0)
    return -1;
  if (s->bundle == NULL || s->rootfs == NULL || s->created == NULL)
    return csr_error_set (err, EINVAL, "container '%s': state without %s", s->id,
                          s->bundle == NULL   ? "bundle"
                          : s->rootfs == NULL ? "rootfs"
                                              : "created");
  if (s->pid < 0 || s->pid_start > (uint64_t)LLONG_MAX)
    return csr_error_set (err, EINVAL, "container '%s': invalid pid %d / start time %llu", s->id,
                          (int)s->pid, (unsigned long long)s->pid_start);
  if (s->n_cgroup_v1 > CGROUP_V1_MAX)
    return csr_error_set (err, EINVAL, "container '%s': more than %zu cgroup v1 directories", s->id,
                          (size_t)CGROUP_V1_MAX);
  for (size_t i = 0; i < s->n_cgroup_v1; i++)
    if (s->cgroup_v1[i] == NULL)
      return csr_error_set (err, EINVAL, "container '%s': cgroup v1 directory %zu is missing",
                            s->id, i);
  for (size_t i = 0; i < s->n_annotations; i++)
    if (s->annotation_keys[i] == NULL || s->annotation_values[i] == NULL)
      return csr_error_set (err, EINVAL, "container '%s': annotation %zu is missing", s->id, i);

  cleanup_gen yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return csr_error_set (err, ENOMEM, "container '%s': save state", s->id);
  yajl_gen_config (g, yajl_gen_validate_utf8, 1);
  yajl_gen_status st = yajl_gen_map_open (g);
  g_key (g, &st, "version");
  g_int (g, &st, STATE_FORMAT_VERSION);
  g_key (g, &st, "id");
  g_str (g, &st, s->id);
  g_key (g, &st, "bundle");
  g_str (g, &st, s->bundle);
  g_key (g, &st, "rootfs");
  g_str (g, &st, s->rootfs);
  g_key (g, &st, "pid");
  g_int (g, &st, s->pid);
  g_key (g, &st, "pid_start");
  g_int (g, &st, (long long)s->pid_start);
  g_key (g, &st, "created");
  g_str (g, &st, s->created);
  g_key (g, &st, "owner");
  g_int (g, &st, (long long)s->owner);
  g_key (g, &st, "started");
  g_bool (g, &st, s->started);
  g_key (g, &st, "paused");
  g_bool (g, &st, s->paused);
  g_key (g, &st, "cgroup_v2");
  g_str (g, &st, s->cgroup_v2);
  g_key (g, &st, "cgroup_v1");
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_open (g);
  for (size_t i = 0; i < s->n_cgroup_v1; i++)
    g_str (g, &st, s->cgroup_v1[i]);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_close (g);
  g_key (g, &st, "annotations");
  g_annotations (g, &st, s);
  g_key (g, &st, "systemd_cgroup");
  g_bool (g, &st, s->systemd_cgroup);
  g_key (g, &st, "config_path");
  g_str (g, &st, s->config_path);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_map_close (g);
  if (st != yajl_gen_status_ok)
    return csr_error_set (err, EINVAL, "container '%s': save state: %s", s->id,
                          gen_status_text (st));
  const unsigned char *buf;
  size_t len;
  if (yajl_gen_get_buf (g, &buf, &len) != yajl_gen_status_ok)
    return csr_error_set (err, EINVAL, "container '%s': save state", s->id);

  cleanup_free char *path = path_join3 (root, s->id, STATE_FILE);
  if (path == NULL)
    return csr_error_errno (err, "container '%s': save state", s->id);
  if (csr_write_file_atomic (path, buf, len, 0600, err) < 0)
    return csr_error_wrap (err, "container '%s'", s->id);
  return 0;
}

/* ---------------------------------------------------------------- load */

/* "malformed state file 'PATH': "KEY" WHAT" (just WHAT without a KEY). */
static int
malformed (const char *path, csr_error **err, const char *key, const char *what)
{
  if (key == NULL)
    return csr_error_set (err, EINVAL, "malformed state file '%s': %s", path, what);
  return csr_error_set (err, EINVAL, "malformed state file '%s': \"%s\" %s", path, key, what);
}

/* A string member: required unless NULLABLE, where absent or null is NULL. */
static int
load_str (yajl_val obj, const char *key, bool nullable, char **out, const char *path,
          csr_error **err)
{
  yajl_val v = csr_json_get (obj, key);
  if (nullable && (v == NULL || YAJL_IS_NULL (v)))
    {
      *out = NULL;
      return 0;
    }
  if (v == NULL)
    return malformed (path, err, key, "is missing");
  if (!YAJL_IS_STRING (v))
    return malformed (path, err, key, "must be a string");
  *out = strdup (v->u.string);
  if (*out == NULL)
    return csr_error_errno (err, "read state file '%s'", path);
  return 0;
}

static int
load_int (yajl_val obj, const char *key, long long min, long long max, long long *out,
          const char *path, csr_error **err)
{
  yajl_val v = csr_json_get (obj, key);
  if (v == NULL)
    return malformed (path, err, key, "is missing");
  if (!YAJL_IS_INTEGER (v))
    return malformed (path, err, key, "must be an integer");
  if (YAJL_GET_INTEGER (v) < min || YAJL_GET_INTEGER (v) > max)
    return malformed (path, err, key, "is out of range");
  *out = YAJL_GET_INTEGER (v);
  return 0;
}

/* A boolean member; when OPTIONAL, absent is false. */
static int
load_bool (yajl_val obj, const char *key, bool optional, bool *out, const char *path,
           csr_error **err)
{
  yajl_val v = csr_json_get (obj, key);
  if (v == NULL && optional)
    {
      *out = false;
      return 0;
    }
  if (v == NULL)
    return malformed (path, err, key, "is missing");
  if (!YAJL_IS_TRUE (v) && !YAJL_IS_FALSE (v))
    return malformed (path, err, key, "must be a boolean");
  *out = YAJL_IS_TRUE (v);
  return 0;
}

static int
load_tree (yajl_val top, const char *id, const char *path, struct oci_state *s, csr_error **err)
{
  if (!YAJL_IS_OBJECT (top))
    return malformed (path, err, NULL, "not a JSON object");
  long long ver, pid, pid_start, owner;
  if (load_int (top, "version", STATE_FORMAT_VERSION, STATE_FORMAT_VERSION, &ver, path, err) < 0)
    return -1;
  if (load_str (top, "id", false, &s->id, path, err) < 0)
    return -1;
  if (strcmp (s->id, id) != 0)
    return csr_error_set (err, EINVAL, "malformed state file '%s': it is for container '%s'", path,
                          s->id);
  if (load_str (top, "bundle", false, &s->bundle, path, err) < 0
      || load_str (top, "rootfs", false, &s->rootfs, path, err) < 0
      || load_int (top, "pid", 0, INT_MAX, &pid, path, err) < 0
      || load_int (top, "pid_start", 0, LLONG_MAX, &pid_start, path, err) < 0
      || load_str (top, "created", false, &s->created, path, err) < 0
      || load_int (top, "owner", 0, (uid_t)-1, &owner, path, err) < 0
      || load_bool (top, "started", false, &s->started, path, err) < 0
      || load_bool (top, "paused", false, &s->paused, path, err) < 0
      || load_str (top, "cgroup_v2", true, &s->cgroup_v2, path, err) < 0
      || load_bool (top, "systemd_cgroup", true, &s->systemd_cgroup, path, err) < 0
      || load_str (top, "config_path", true, &s->config_path, path, err) < 0)
    return -1;
  s->pid = (pid_t)pid;
  s->pid_start = (uint64_t)pid_start;
  s->owner = (uid_t)owner;

  yajl_val v1 = csr_json_get (top, "cgroup_v1");
  if (v1 != NULL && !YAJL_IS_NULL (v1))
    {
      if (!YAJL_IS_ARRAY (v1))
        return malformed (path, err, "cgroup_v1", "must be an array of strings");
      if (v1->u.array.len > CGROUP_V1_MAX)
        return malformed (path, err, "cgroup_v1", "has too many entries");
      for (size_t i = 0; i < v1->u.array.len; i++)
        {
          yajl_val e = v1->u.array.values[i];
          if (!YAJL_IS_STRING (e))
            return malformed (path, err, "cgroup_v1", "must be an array of strings");
          s->cgroup_v1[i] = strdup (e->u.string);
          if (s->cgroup_v1[i] == NULL)
            return csr_error_errno (err, "read state file '%s'", path);
          s->n_cgroup_v1 = i + 1;
        }
    }

  yajl_val ann = csr_json_get (top, "annotations");
  if (ann != NULL && !YAJL_IS_NULL (ann))
    {
      if (!YAJL_IS_OBJECT (ann))
        return malformed (path, err, "annotations", "must be an object of strings");
      size_t n = ann->u.object.len;
      s->annotation_keys = calloc (n + 1, sizeof (char *));
      s->annotation_values = calloc (n + 1, sizeof (char *));
      if (s->annotation_keys == NULL || s->annotation_values == NULL)
        return csr_error_errno (err, "read state file '%s'", path);
      for (size_t i = 0; i < n; i++)
        {
          yajl_val e = ann->u.object.values[i];
          if (!YAJL_IS_STRING (e))
            return malformed (path, err, "annotations", "must be an object of strings");
          s->annotation_keys[i] = strdup (ann->u.object.keys[i]);
          s->annotation_values[i] = strdup (e->u.string);
          s->n_annotations = i + 1;
          if (s->annotation_keys[i] == NULL || s->annotation_values[i] == NULL)
            return csr_error_errno (err, "read state file '%s'", path);
        }
    }
  return 0;
}

int
oci_state_load (const char *root, const char *id, struct oci_state *s, csr_error **err)
{
  memset (s, 0, sizeof *s);
  if (oci_id_check (id, err) < 0)
    return -1;
  cleanup_free char *path = path_join3 (root, id, STATE_FILE);
  if (path == NULL)
    return csr_error_errno (err, "container '%s'", id);
  cleanup_free char *data = NULL;
  size_t len;
  cleanup_error csr_error *rerr = NULL;
  if (csr_read_file (path, STATE_FILE_MAX, &data, &len, &rerr) < 0)
    {
      /* No directory, or a directory whose state was never written (a
       * `create` that died early): either way there is no container. */
      if (rerr && (rerr->status == ENOENT || rerr->status == ENOTDIR))
        return no_such_container (id, err);
      if (err == NULL || *err != NULL)
        return -1;
      *err = steal_pointer (&rerr);
      return csr_error_wrap (err, "container '%s'", id);
    }
  if (strlen (data) != len)
    return csr_error_set (err, EINVAL, "malformed state file '%s': contains a NUL byte", path);
  char ebuf[256] = "";
  cleanup_tree yajl_val top = yajl_tree_parse (data, ebuf, sizeof ebuf);
  if (top == NULL)
    {
      /* yajl's messages span lines; keep the first. */
      ebuf[strcspn (ebuf, "\n")] = '\0';
      return csr_error_set (err, EINVAL, "malformed state file '%s': %s", path,
                            *ebuf ? ebuf : "not valid JSON");
    }
  struct oci_state tmp = { 0 };
  if (load_tree (top, id, path, &tmp, err) < 0)
    {
      oci_state_release (&tmp);
      return -1;
    }
  *s = tmp;
  return 0;
}

int
oci_state_remove (const char *root, const char *id, csr_error **err)
{
  if (oci_id_check (id, err) < 0)
    return -1;
  cleanup_free char *dir = oci_state_dir (root, id);
  if (dir == NULL)
    return csr_error_errno (err, "container '%s'", id);
  if (csr_rm_rf (dir, err) < 0)
    return csr_error_wrap (err, "container '%s'", id);
  return 0;
}

void
oci_state_release (struct oci_state *s)
{
  if (s == NULL)
    return;
  free (s->id);
  free (s->bundle);
  free (s->rootfs);
  free (s->created);
  free (s->cgroup_v2);
  for (size_t i = 0; i < sizeof s->cgroup_v1 / sizeof s->cgroup_v1[0]; i++)
    free (s->cgroup_v1[i]);
  if (s->annotation_keys)
    for (size_t i = 0; i < s->n_annotations; i++)
      free (s->annotation_keys[i]);
  if (s->annotation_values)
    for (size_t i = 0; i < s->n_annotations; i++)
      free (s->annotation_values[i]);
  free (s->annotation_keys);
  free (s->annotation_values);
  free (s->config_path);
  memset (s, 0, sizeof *s);
}

/* ---------------------------------------------------------------- lock, list */

int
oci_state_lock (const char *root, const char *id, csr_error **err)
{
  if (oci_id_check (id, err) < 0)
    return -1;
  cleanup_free char *path = path_join3 (root, id, LOCK_FILE);
  if (path == NULL)
    return csr_error_errno (err, "container '%s': lock", id);
  cleanup_close int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return no_such_container (id, err);
      return csr_error_errno (err, "container '%s': lock '%s'", id, path);
    }
  while (flock (fd, LOCK_EX) < 0)
    if (errno != EINTR)
      return csr_error_errno (err, "container '%s': lock '%s'", id, path);
  return steal_fd (&fd);
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

static void
free_strv (char **v, size_t n)
{
  if (v == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

int
oci_state_list (const char *root, char ***ids, size_t *n, csr_error **err)
{
  *ids = NULL;
  if (n)
    *n = 0;
  size_t count = 0, cap = 8;
  char **v = calloc (cap + 1, sizeof (char *));
  if (v == NULL)
    return csr_error_errno (err, "list '%s'", root);
  cleanup_dir DIR *d = opendir (root);
  if (d == NULL)
    {
      if (errno == ENOENT)
        goto done; /* no root yet: no containers */
      csr_error_errno (err, "list '%s'", root);
      free (v);
      return -1;
    }
  for (;;)
    {
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL)
        {
          if (errno != 0)
            {
              csr_error_errno (err, "list '%s'", root);
              free_strv (v, count);
              return -1;
            }
          break;
        }
      if (oci_id_check (de->d_name, NULL) < 0)
        continue;
      struct stat st;
      if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
        continue;
      char sub[OCI_ID_MAX + sizeof "/" STATE_FILE];
      snprintf (sub, sizeof sub, "%s/%s", de->d_name, STATE_FILE);
      if (fstatat (dirfd (d), sub, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
        continue;
      if (count == cap)
        {
          char **nv = realloc (v, (cap * 2 + 1) * sizeof (char *));
          if (nv == NULL)
            {
              csr_error_errno (err, "list '%s'", root);
              free_strv (v, count);
              return -1;
            }
          v = nv;
          cap *= 2;
        }
      v[count] = strdup (de->d_name);
      if (v[count] == NULL)
        {
          csr_error_errno (err, "list '%s'", root);
          free_strv (v, count);
          return -1;
        }
      count++;
    }
  qsort (v, count, sizeof (char *), cmp_str);
done:
  v[count] = NULL;
  *ids = v;
  if (n)
    *n = count;
  return 0;
}

/* ---------------------------------------------------------------- state document */

/* The user name of UID, or "" (malloc'ed; NULL only when out of memory). */
static char *
user_name (uid_t uid)
{
  long sz = sysconf (_SC_GETPW_R_SIZE_MAX);
  size_t len = sz > 0 ? (size_t)sz : 16384;
  for (int tries = 0; tries < 8; tries++)
    {
      cleanup_free char *buf = malloc (len);
      if (buf == NULL)
        return NULL;
      struct passwd pw, *res = NULL;
      int r = getpwuid_r (uid, &pw, buf, len, &res);
      if (r == ERANGE)
        {
          len *= 2;
          continue;
        }
      if (r != 0 || res == NULL || res->pw_name == NULL)
        break;
      return strdup (res->pw_name);
    }
  return strdup ("");
}

static char *
state_json (const struct oci_state *s, bool pretty)
{
  enum oci_status status = s->force_running ? OCI_RUNNING : oci_state_status (s);
  cleanup_free char *owner = user_name (s->owner);
  if (owner == NULL)
    return NULL;
  cleanup_gen yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return NULL;
  if (pretty)
    {
      yajl_gen_config (g, yajl_gen_beautify, 1);
      yajl_gen_config (g, yajl_gen_indent_string, "  ");
    }
  yajl_gen_status st = yajl_gen_map_open (g);
  /* runc's order: ociVersion id pid status bundle rootfs created annotations owner. */
  g_key (g, &st, "ociVersion");
  g_str (g, &st, "1.2.0");
  g_key (g, &st, "id");
  g_str (g, &st, s->id ? s->id : "");
  g_key (g, &st, "pid");
  g_int (g, &st, status == OCI_STOPPED || s->pid < 0 ? 0 : s->pid);
  g_key (g, &st, "status");
  g_str (g, &st, oci_status_name (status));
  g_key (g, &st, "bundle");
  g_str (g, &st, s->bundle ? s->bundle : "");
  g_key (g, &st, "rootfs");
  g_str (g, &st, s->rootfs ? s->rootfs : "");
  g_key (g, &st, "created");
  g_str (g, &st, s->created ? s->created : "");
  if (s->n_annotations > 0)
    {
      g_key (g, &st, "annotations");
      g_annotations (g, &st, s);
    }
  g_key (g, &st, "owner");
  g_str (g, &st, owner);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_map_close (g);
  const unsigned char *buf;
  size_t len;
  if (st != yajl_gen_status_ok || yajl_gen_get_buf (g, &buf, &len) != yajl_gen_status_ok)
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

char *
oci_state_json (const struct oci_state *s)
{
  return state_json (s, true);
}

char *
oci_state_json_compact (const struct oci_state *s)
{
  /* No trailing newline: list joins these into one line. */
  char *out = state_json (s, false);
  size_t len = out ? strlen (out) : 0;
  if (len > 0 && out[len - 1] == '\n')
    out[len - 1] = '\0';
  return out;
}

/* ---------------------------------------------------------------- processes */

uint64_t
oci_pid_start_time (pid_t pid, bool *zombie)
{
  if (zombie)
    *zombie = false;
  if (pid <= 0)
    return 0;
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return 0;
  /* "pid (comm) S ppid ..." — comm is at most 16 bytes but may hold any
   * character, ')' and spaces included, so fields start after the LAST ')'. */
  char buf[2048];
  size_t used = 0;
  for (;;)
    {
      ssize_t r = read (fd, buf + used, sizeof buf - 1 - used);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return 0;
      if (r == 0 || (used += (size_t)r) == sizeof buf - 1)
        break;
    }
  buf[used] = '\0';
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return 0;
  p++;
  /* Field 3 (state) is the first after comm; field 22 (starttime) the 20th. */
  uint64_t start = 0;
  char state = 0;
  for (int field = 3; field <= 22; field++)
    {
      if (*p != ' ')
        return 0;
      while (*p == ' ')
        p++;
      char *end = p + strcspn (p, " \n");
      if (end == p)
        return 0;
      if (field == 3)
        state = *p;
      else if (field == 22)
        {
          errno = 0;
          char *e;
          unsigned long long v = strtoull (p, &e, 10);
          if (errno != 0 || e != end || !isdigit ((unsigned char)*p))
            return 0;
          start = v;
        }
      p = end;
    }
  if (zombie)
    *zombie = state == 'Z' || state == 'X' || state == 'x';
  return start;
}

/* ---------------------------------------------------------------- signals */

static const struct
{
  const char *name;
  int sig;
} signal_names[] = {
  { "HUP", SIGHUP },       { "INT", SIGINT },   { "QUIT", SIGQUIT },     { "ILL", SIGILL },
  { "TRAP", SIGTRAP },     { "ABRT", SIGABRT }, { "IOT", SIGIOT },       { "BUS", SIGBUS },
  { "FPE", SIGFPE },       { "KILL", SIGKILL }, { "USR1", SIGUSR1 },     { "SEGV", SIGSEGV },
  { "USR2", SIGUSR2 },     { "PIPE", SIGPIPE }, { "ALRM", SIGALRM },     { "TERM", SIGTERM },
#ifdef SIGSTKFLT
  { "STKFLT", SIGSTKFLT },
#endif
  { "CHLD", SIGCHLD },     { "CLD", SIGCHLD },  { "CONT", SIGCONT },     { "STOP", SIGSTOP },
  { "TSTP", SIGTSTP },     { "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },     { "URG", SIGURG },
  { "XCPU", SIGXCPU },     { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
  { "WINCH", SIGWINCH },   { "IO", SIGIO },     { "POLL", SIGPOLL },     { "PWR", SIGPWR },
  { "SYS", SIGSYS },
};

/* A decimal number of 1-3 digits in S (the whole string), or -1. */
static int
small_number (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > 3 || strspn (s, "0123456789") != n)
    return -1;
  return atoi (s);
}

int
oci_parse_signal (const char *s, int *sig, csr_error **err)
{
  if (s == NULL || *s == '\0')
    return csr_error_set (err, EINVAL, "unknown signal ''");
  int num = small_number (s);
  if (num >= 0)
    {
      /* 0 only checks that the process exists (kill(1), runc and crun). */
      if (num >= NSIG)
        return csr_error_set (err, EINVAL, "unknown signal '%s'", s);
      *sig = num;
      return 0;
    }
  const char *name = s;
  if (strncasecmp (name, "SIG", 3) == 0)
    name += 3;
  for (size_t i = 0; i < sizeof signal_names / sizeof signal_names[0]; i++)
    if (strcasecmp (name, signal_names[i].name) == 0)
      {
        *sig = signal_names[i].sig;
        return 0;
      }
  int min = SIGRTMIN, max = SIGRTMAX;
  if (strncasecmp (name, "RTMIN", 5) == 0 || strncasecmp (name, "RTMAX", 5) == 0)
    {
      bool is_min = strncasecmp (name, "RTMIN", 5) == 0;
      const char *rest = name + 5;
      int v = is_min ? min : max;
      if (*rest != '\0')
        {
          /* RTMIN+N counts up, RTMAX-N down. */
          int off = small_number (rest + 1);
          if (*rest != (is_min ? '+' : '-') || off < 0)
            return csr_error_set (err, EINVAL, "unknown signal '%s'", s);
          v = is_min ? min + off : max - off;
        }
      if (v < min || v > max)
        return csr_error_set (err, EINVAL, "unknown signal '%s'", s);
      *sig = v;
      return 0;
    }
  return csr_error_set (err, EINVAL, "unknown signal '%s'", s);
}

/* ---------------------------------------------------------------- time */

char *
oci_now_rfc3339 (void)
{
  struct timespec ts;
  if (clock_gettime (CLOCK_REALTIME, &ts) < 0)
    return NULL;
  struct tm tm;
  if (gmtime_r (&ts.tv_sec, &tm) == NULL)
    return NULL;
  char date[64];
  if (strftime (date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
    return NULL;
  char *out = NULL;
  if (asprintf (&out, "%s.%09ldZ", date, (long)ts.tv_nsec) < 0)
    return NULL;
  return out;
}
