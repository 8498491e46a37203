/* csrun hook STAGE: an OCI hook for any runtime (runc, crun, csrun) that acts
 * on containers that opt in with annotations:
 *
 *   run.csrun.gate=true    prestart / createRuntime: the container's Python
 *                          program (process.args) goes through the gate, in a
 *                          csrun jail; a blocked program fails the start
 *   run.csrun.policy=PATH  the gate policy instead of the default gate.conf
 *   run.csrun.scan=true    poststop: the container's log is scanned for silent
 *                          failures; the verdict goes to BUNDLE/csrun-verdict.json
 *   run.csrun.log=PATH     the log to scan (default BUNDLE/ctr.log, conmon's
 *                          k8s-file log)
 *
 * The runtime gives the state ({"ociVersion","id","status","pid","bundle",
 * "annotations"}) on standard input and nothing else: no environment. */
#include "config.h"
#include "hook.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common.h"
#include "oci/oci-config.h"
#include "oci/hookutil.h"
#include "supervisor/scan.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/pycoding.h"
#include "util/termsafe.h"
#include "util/utf8.h"

#define PROG "csrun hook"
#define STATE_MAX (1 << 20)
#define SCRIPT_MAX (1 << 20)
#define LOG_TAIL (1 << 20)
#define ANN_GATE "run.csrun.gate"
#define ANN_SCAN "run.csrun.scan"
#define ANN_POLICY "run.csrun.policy"
#define ANN_LOG "run.csrun.log"
#define VERDICT_NAME "csrun-verdict.json"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum stage
{
  STAGE_GATE, /* prestart, createRuntime */
  STAGE_SCAN, /* poststop */
  STAGE_NONE, /* the other stages: nothing to do */
};

struct hook_state
{
  yajl_val doc;
  const char *id;
  const char *bundle; /* absolute */
  long long pid;      /* 0: not given */
  yajl_val annotations;
  struct oci_config config;
  bool has_config;
};

static void
hook_state_release (struct hook_state *st)
{
  if (st->doc)
    yajl_tree_free (st->doc);
  if (st->has_config)
    oci_config_release (&st->config);
}

/* The state document: "id" and an absolute "bundle" are required, "pid" and
 * "annotations" optional (a poststop state has no pid).  A NUL anywhere in
 * it (a byte, or "\u0000" in a string) is refused: the id would be cut
 * short silently. */
static int
state_parse (const char *text, size_t len, struct hook_state *st, csr_error **err)
{
  if (csr_json_prescan (text, len, err) < 0)
    return csr_error_wrap (err, "the state on standard input");
  char ebuf[256] = "";
  st->doc = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (st->doc == NULL)
    {
      ebuf[strcspn (ebuf, "\n")] = '\0';
      return csr_error_set (err, 0, "the state on standard input is not JSON: %s", ebuf);
    }
  if (!YAJL_IS_OBJECT (st->doc))
    return csr_error_set (err, 0, "the state on standard input is not a JSON object");
  yajl_val v = csr_json_get (st->doc, "id");
  if (v == NULL || !YAJL_IS_STRING (v) || v->u.string[0] == '\0')
    return csr_error_set (err, 0, "the state has no \"id\" string");
  st->id = v->u.string;
  v = csr_json_get (st->doc, "bundle");
  if (v == NULL || !YAJL_IS_STRING (v) || v->u.string[0] != '/')
    return csr_error_set (err, 0, "the state has no absolute \"bundle\" path");
  st->bundle = v->u.string;
  v = csr_json_get (st->doc, "pid");
  if (v != NULL && !YAJL_IS_NULL (v))
    {
      if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < 0 || YAJL_GET_INTEGER (v) > INT32_MAX)
        return csr_error_set (err, 0, "the state's \"pid\" is not a process id");
      st->pid = YAJL_GET_INTEGER (v);
    }
  v = csr_json_get (st->doc, "annotations");
  if (v != NULL && !YAJL_IS_NULL (v))
    {
      if (!YAJL_IS_OBJECT (v))
        return csr_error_set (err, 0, "the state's \"annotations\" is not an object");
      st->annotations = v;
    }
  return 0;
}

/* KEY from the state's annotations, else from config.json's. */
static const char *
annotation (const struct hook_state *st, const char *key)
{
  if (st->annotations)
    {
      yajl_val v = csr_json_get (st->annotations, key);
      if (v && YAJL_IS_STRING (v))
        return v->u.string;
    }
  return st->has_config ? oci_config_annotation (&st->config, key) : NULL;
}

static bool
annotation_true (const struct hook_state *st, const char *key)
{
  const char *v = annotation (st, key);
  return v != NULL && strcmp (v, "true") == 0;
}

/* ------------------------------------------------------------------ gate */

static long
openat2_in_root (int rootfd, const char *path, int flags)
{
  struct open_how how
      = { .flags = (uint64_t)flags, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  return syscall (SYS_openat2, rootfd, path, &how, sizeof how);
}

/* The container's root as its process sees it: /proc/PID/root + root.path
 * (relative to the bundle when relative).  Before pivot_root (prestart,
 * createRuntime) that is the image with the bind mounts applied. */
static int
open_container_root (const struct hook_state *st, csr_error **err)
{
  if (st->pid <= 0)
    return csr_error_set (err, 0, "the state has no \"pid\" of the container");
  const char *rp = st->config.root_path;
  cleanup_free char *path = NULL;
  int n = rp[0] == '/' ? asprintf (&path, "/proc/%lld/root%s", st->pid, rp)
                       : asprintf (&path, "/proc/%lld/root%s/%s", st->pid, st->bundle, rp);
  if (n < 0)
    {
      path = NULL;
      return csr_error_set (err, ENOMEM, "open the container's root");
    }
  int fd = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open the container's root '%s'", path);
  return fd;
}

/* Open PATH (absolute in the container) for reading, resolved inside ROOTFD:
 * symlinks and ".." can't leave the container's root, magic links are refused,
 * opening a FIFO does not block. */
static int
open_in_root (int rootfd, const char *path, csr_error **err)
{
  long fd = openat2_in_root (rootfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0 && errno == ENOSYS)
    return csr_error_errno (err, "open '%s' in the container (openat2, Linux 5.6)", path);
  if (fd < 0)
    return csr_error_errno (err, "open '%s' in the container", path);
  return (int)fd;
}

/* DIR/NAME without a doubled '/' or a leading "./" (for messages). */
static char *
join (const char *dir, const char *name, size_t name_len)
{
  while (name_len >= 2 && name[0] == '.' && name[1] == '/')
    {
      name += 2;
      name_len -= 2;
    }
  size_t n = strlen (dir);
  char *out = NULL;
  if (asprintf (&out, "%s%s%.*s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/", (int)name_len, name)
      < 0)
    return NULL;
  return out;
}

/* What execvp would find for NAME (no '/') in the process's PATH. */
static char *
search_path (int rootfd, const struct oci_config *c, const char *name, int *fd_out)
{
  const char *path = DEFAULT_PATH;
  for (size_t i = 0; i < c->n_env; i++)
    if (strncmp (c->env[i], "PATH=", 5) == 0)
      path = c->env[i] + 5;
  for (const char *p = path;; p++)
    {
      size_t n = strcspn (p, ":");
      /* An empty entry is the working directory. */
      cleanup_free char *dir = p[0] == '/' ? strndup (p, n) : join (c->cwd, p, n);
      char *cand = dir ? join (dir, name, strlen (name)) : NULL;
      if (cand)
        {
          long fd = openat2_in_root (rootfd, cand, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
          struct stat sb;
          if (fd >= 0 && fstat ((int)fd, &sb) == 0 && S_ISREG (sb.st_mode))
            {
              *fd_out = (int)fd;
              return cand;
            }
          if (fd >= 0)
            close ((int)fd);
          free (cand);
        }
      p += n;
      if (*p == '\0')
        return NULL;
    }
}

/* Read the script P names, as the container's process will see it. */
static int
read_script (const struct hook_state *st, const struct csr_hook_prog *p, char **code, size_t *len,
             char **shown, csr_error **err)
{
  const struct oci_config *c = &st->config;
  cleanup_close int rootfd = open_container_root (st, err);
  if (rootfd < 0)
    return -1;
  cleanup_free char *path = NULL;
  cleanup_close int fd = -1;
  if (p->executable && strchr (p->value, '/') == NULL)
    {
      path = search_path (rootfd, c, p->value, &fd);
      if (path == NULL)
        return csr_error_set (err, 0, "'%s' is not in the process's PATH", p->value);
    }
  else
    {
      path = p->value[0] == '/' ? strdup (p->value) : join (c->cwd, p->value, strlen (p->value));
      if (path == NULL)
        return csr_error_set (err, ENOMEM, "read the script");
      fd = open_in_root (rootfd, path, err);
      if (fd < 0)
        return -1;
    }
  struct stat sb;
  if (fstat (fd, &sb) < 0)
    return csr_error_errno (err, "fstat '%s'", path);
  /* python DIR runs DIR/__main__.py. */
  if (S_ISDIR (sb.st_mode) && !p->executable)
    {
      close (steal_fd (&fd));
      char *main_py = join (path, "__main__.py", 11);
      if (main_py == NULL)
        return csr_error_set (err, ENOMEM, "read the script");
      free (path);
      path = main_py;
      fd = open_in_root (rootfd, path, err);
      if (fd < 0 || fstat (fd, &sb) < 0)
        return fd < 0 ? -1 : csr_error_errno (err, "fstat '%s'", path);
    }
  if (!S_ISREG (sb.st_mode))
    return csr_error_set (err, 0, "'%s' in the container is not a regular file", path);
  if (sb.st_size > SCRIPT_MAX)
    return csr_error_set (err, 0, "'%s' in the container is larger than %d bytes", path,
                          SCRIPT_MAX);
  if (csr_read_fd (fd, SCRIPT_MAX, code, len, err) < 0)
    return csr_error_wrap (err, "'%s' in the container", path);
  *shown = steal_pointer (&path);
  return 0;
}

/* Rootless podman runs the runtime, and so its hooks, as root in a user
 * namespace and without HOME: the default cache would then be
 * /var/cache/csrun, which that root can't write.  Use the cache of the user
 * that uid 0 is (NULL when not in that case or when the environment says). */
static char *
userns_cache_dir (void)
{
  if (geteuid () != 0 || getenv ("CSRUN_CACHE_DIR") || getenv ("XDG_CACHE_HOME"))
    return NULL;
  cleanup_file FILE *f = fopen ("/proc/self/uid_map", "re");
  if (f == NULL)
    return NULL;
  unsigned long inside, outside, count;
  while (fscanf (f, "%lu %lu %lu", &inside, &outside, &count) == 3)
    if (inside == 0)
      {
        if (outside == 0)
          return NULL;
        struct passwd *pw = getpwuid ((uid_t)outside);
        char *dir = NULL;
        if (pw == NULL || pw->pw_dir == NULL || pw->pw_dir[0] != '/'
            || asprintf (&dir, "%s/.cache/csrun/rootfs", pw->pw_dir) < 0)
          return NULL;
        return dir;
      }
  return NULL;
}

/* A policy file named by an annotation is read by the hook, maybe as root,
 * and errors quote what it holds: accept only what anyone may read anyway. */
static int
check_policy_file (const char *path, csr_error **err)
{
  if (path[0] != '/')
    return csr_error_set (err, 0, ANN_POLICY "='%s': not an absolute path", path);
  struct stat sb;
  if (stat (path, &sb) < 0)
    return csr_error_errno (err, ANN_POLICY "='%s'", path);
  if (!S_ISREG (sb.st_mode))
    return csr_error_set (err, 0, ANN_POLICY "='%s': not a regular file", path);
  if ((sb.st_mode & S_IROTH) == 0)
    return csr_error_set (err, 0,
                          ANN_POLICY "='%s': refused: not readable by everyone (a policy is not "
                                     "a secret, and its errors are shown)",
                          path);
  if (sb.st_mode & S_IWOTH)
    return csr_error_set (err, 0, ANN_POLICY "='%s': refused: writable by everyone", path);
  return 0;
}

/* The gate stage's lines, kept to be written to the container's log too:
 * crun does not pass a hook's stderr on (podman then shows only "error
 * executing hook"), runc and csrun do. */
#define TOLD_MAX 64
static struct
{
  bool keep;
  size_t n;
  char *lines[TOLD_MAX];
} told;

static void
told_release (void)
{
  for (size_t i = 0; i < told.n; i++)
    free (told.lines[i]);
  memset (&told, 0, sizeof told);
}

/* One line on stderr: "csrun hook: MESSAGE".  The message may quote the
 * container's script, its config or its logs, and podman shows what a hook
 * prints on the user's terminal however it got there (a pipe to podman here):
 * always rendered by csr_termsafe. */
static void __attribute__ ((format (printf, 1, 2))) hook_say (const char *fmt, ...)
{
  cleanup_free char *text = NULL;
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (&text, fmt, ap);
  va_end (ap);
  cleanup_free char *safe = n >= 0 ? csr_termsafe_str (text) : NULL;
  fprintf (stderr, PROG ": %s\n", safe ? safe : "(out of memory)");
  if (told.keep && safe && told.n < TOLD_MAX)
    told.lines[told.n++] = steal_pointer (&safe);
}

/* Append LINE to FD as k8s-file records (conmon's log format, what `podman
 * logs` reads): "TIME stderr F csrun hook: TEXT", one per line of LINE. */
static int
log_records (int fd, const char *stamp, const char *line, csr_error **err)
{
  for (const char *p = line;;)
    {
      size_t n = strcspn (p, "\n");
      cleanup_free char *rec = NULL;
      int len = asprintf (&rec, "%s stderr F " PROG ": %.*s\n", stamp, (int)n, p);
      if (len < 0)
        {
          rec = NULL;
          return csr_error_set (err, ENOMEM, "a log record");
        }
      if (csr_write_all (fd, rec, (size_t)len, err) < 0)
        return -1;
      p += n;
      if (*p == '\0')
        return 0;
      p++;
    }
}

/* The gate refused the container: its lines go to the container's log as
 * well, BUNDLE/ctr.log (conmon's k8s-file log, which `podman logs` shows),
 * when that file exists; then one more line on stderr names it.  Only that
 * file: an annotation can't choose a file for the hook (maybe root) to
 * write.  Never created, never through a symlink. */
static void
log_refusal (const struct hook_state *st)
{
  if (told.n == 0)
    return;
  told.keep = false;
  cleanup_close int dirfd = open (st->bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return;
  cleanup_close int fd = openat (
      dirfd, "ctr.log", O_WRONLY | O_APPEND | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat (fd, &sb) < 0 || !S_ISREG (sb.st_mode))
    return;
  struct timespec now;
  struct tm tm;
  char day[32], stamp[64];
  clock_gettime (CLOCK_REALTIME, &now);
  gmtime_r (&now.tv_sec, &tm);
  strftime (day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (stamp, sizeof stamp, "%s.%09ld+00:00", day, now.tv_nsec);
  csr_error *e = NULL;
  for (size_t i = 0; i < told.n; i++)
    if (log_records (fd, stamp, told.lines[i], &e) < 0)
      {
        hook_say ("container %s: cannot write its log %s/ctr.log: %s", st->id, st->bundle,
                  csr_error_text (e));
        csr_error_free (e);
        return;
      }
  hook_say ("container %s: the lines above are also in its log %s/ctr.log (podman logs %s)", st->id,
            st->bundle, st->id);
}

/* Gate CODE (named NAME in messages) in a jail: 0 pass, 1 refused (printed).
 * INLINE: CODE is `python -c` text, which Python decodes from argv and
 * compiles as text, ignoring any coding declaration; the gate compiles bytes
 * and would honour one, so it would read other code than runs (a "coding:
 * utf-7" comment can hide lines from it): refused. */
static int
gate_code (const struct hook_state *st, const char *name, const char *code, size_t len,
           bool inline_code)
{
  size_t i = 0;
  while (i < len && strchr (" \t\r\n\f\v", code[i]))
    i++;
  if (i == len)
    return 0; /* nothing runs */
  if (memchr (code, '\0', len))
    {
      hook_say ("%s: refused: contains a NUL byte", name);
      return 1;
    }
  char enc[64];
  csr_error *ce = NULL;
  if (csr_pycoding_check (code, len, enc, sizeof enc, &ce) < 0)
    {
      hook_say ("%s: refused: %s", name, csr_error_text (ce));
      csr_error_free (ce);
      return 1;
    }
  if (inline_code && (enc[0] || !csr_utf8_valid (code, len)))
    {
      hook_say ("%s: refused: -c code declares coding: %s, which Python ignores there (the gate "
                "would read the bytes differently)",
                name, enc);
      return 1;
    }
  const char *policy = annotation (st, ANN_POLICY);
  csr_error *e = NULL;
  if (policy && check_policy_file (policy, &e) < 0)
    {
      hook_say ("%s", csr_error_text (e));
      csr_error_free (e);
      return 1;
    }

  /* The gate's verdict only, with `csrun check`'s defaults. */
  struct csr_snippet_request req;
  csr_snippet_request_init (&req);
  req.check_only = true;
  req.name = name;
  req.code = code;
  req.code_len = len;
  req.gate_conf = policy;
  cleanup_free char *cache = userns_cache_dir ();
  req.cache_dir = cache;

  struct csr_snippet_result s;
  memset (&s, 0, sizeof s);
  int src = csr_snippet_run (&req, &s, &e);
  csr_say_rootfs_damage ("csrun check", &s); /* as before the hook called the library */
  if (src < 0)
    {
      hook_say ("%s: cannot gate: %s", name, csr_error_text (e));
      csr_error_free (e);
      csr_snippet_result_release (&s);
      return 1;
    }
  const struct csr_run_result *r = &s.loop.result;
  const struct csr_gate_verdict *v = r->n_attempts ? r->attempts[0].gate : NULL;
  int rc = 1;
  if (r->status == CSR_STATUS_TIMEOUT)
    hook_say ("%s: cannot gate: the gate timed out after %g s", name, req.timeout_s);
  else if (r->status == CSR_STATUS_ERROR || v == NULL || v->outcome == CSR_GATE_FAILED)
    hook_say ("%s: cannot gate: %s", name,
              r->error          ? r->error
              : v && v->message ? v->message
                                : "no verdict");
  else if (v->outcome == CSR_GATE_PASS)
    rc = 0;
  else
    {
      if (v->outcome == CSR_GATE_SYNTAX_ERROR)
        hook_say ("%s:%d: syntax: %s", name, v->line, v->message ? v->message : "invalid syntax");
      for (size_t k = 0; k < v->n_violations; k++)
        hook_say ("%s:%d: %s: %s", name, v->violations[k].line, v->violations[k].rule,
                  v->violations[k].message ? v->violations[k].message : "");
      hook_say ("%s: blocked by the gate (container %s, " ANN_GATE "=true)", name, st->id);
    }
  csr_snippet_result_release (&s);
  return rc;
}

/* prestart / createRuntime: 0 to let the container start, 1 to stop it. */
static int
hook_gate (struct hook_state *st)
{
  if (!annotation_true (st, ANN_GATE) || !st->config.has_process)
    return 0;
  struct csr_hook_prog p;
  csr_hook_find_program (st->config.args, st->config.n_args, &p);
  switch (p.kind)
    {
    case CSR_HOOK_PROG_NONE:
      return 0;
    case CSR_HOOK_PROG_MODULE:
      hook_say ("note: container %s runs the module '%s' (python -m): not gated (the gate "
                "checks a script or -c code)",
                st->id, p.value);
      return 0;
    case CSR_HOOK_PROG_STDIN:
      hook_say ("note: container %s runs Python on its standard input: not gated (the gate "
                "checks a script or -c code)",
                st->id);
      return 0;
    case CSR_HOOK_PROG_INLINE:
      return gate_code (st, "<string>", p.value, strlen (p.value), true);
    case CSR_HOOK_PROG_FILE:
    default:
      break;
    }
  cleanup_free char *code = NULL;
  cleanup_free char *path = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (read_script (st, &p, &code, &len, &path, &e) < 0)
    {
      hook_say ("%s: cannot gate: %s", p.value, csr_error_text (e));
      csr_error_free (e);
      return 1;
    }
  /* Messages name the script by its path in the container. */
  return gate_code (st, path, code, len, false);
}

/* ------------------------------------------------------------------ scan */

/* The last LOG_TAIL bytes of PATH, from the start of a line. */
static int
read_tail (const char *path, char **out, size_t *len, csr_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return csr_error_errno (err, "read the log '%s'", path);
  struct stat sb;
  if (fstat (fd, &sb) < 0)
    return csr_error_errno (err, "read the log '%s'", path);
  if (!S_ISREG (sb.st_mode))
    return csr_error_set (err, 0, "the log '%s' is not a regular file", path);
  off_t start = sb.st_size > LOG_TAIL ? sb.st_size - LOG_TAIL : 0;
  if (lseek (fd, start, SEEK_SET) < 0)
    return csr_error_errno (err, "read the log '%s'", path);
  cleanup_free char *buf = malloc (LOG_TAIL + 1);
  if (buf == NULL)
    return csr_error_errno (err, "read the log '%s'", path);
  size_t used = 0;
  while (used < LOG_TAIL)
    {
      ssize_t n = read (fd, buf + used, LOG_TAIL - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return csr_error_errno (err, "read the log '%s'", path);
      if (n == 0)
        break;
      used += (size_t)n;
    }
  buf[used] = '\0';
  size_t skip = 0;
  if (start > 0)
    {
      /* Started in the middle of a record: drop it. */
      char *nl = memchr (buf, '\n', used);
      skip = nl ? (size_t)(nl - buf) + 1 : used;
      memmove (buf, buf + skip, used - skip + 1);
    }
  *len = used - skip;
  *out = steal_pointer (&buf);
  return 0;
}

static int
g_str (yajl_gen y, const char *s)
{
  if (s == NULL)
    return yajl_gen_null (y) == yajl_gen_status_ok ? 0 : -1;
  size_t n = strlen (s);
  cleanup_free char *clean = csr_utf8_sanitize (s, n, &n);
  if (clean == NULL)
    return -1;
  return yajl_gen_string (y, (const unsigned char *)clean, n) == yajl_gen_status_ok ? 0 : -1;
}

/* {"id","status":"ok"|"silent_failure","pattern","line","log"}, one line. */
static char *
verdict_json (const char *id, const char *pattern, const char *line, const char *log)
{
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return NULL;
  yajl_gen_config (y, yajl_gen_validate_utf8, 1);
  int rc = yajl_gen_map_open (y) == yajl_gen_status_ok ? 0 : -1;
  const char *keys[] = { "id", "status", "pattern", "line", "log" };
  const char *vals[] = { id, pattern ? "silent_failure" : "ok", pattern, line, log };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0] && rc == 0; i++)
    rc = g_str (y, keys[i]) < 0 || g_str (y, vals[i]) < 0 ? -1 : 0;
  if (rc == 0 && yajl_gen_map_close (y) != yajl_gen_status_ok)
    rc = -1;
  const unsigned char *buf;
  size_t len;
  char *out = NULL;
  if (rc == 0 && yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok
      && asprintf (&out, "%.*s\n", (int)len, (const char *)buf) < 0)
    out = NULL;
  yajl_gen_free (y);
  return out;
}

static int
scan_log (const struct hook_state *st, const char *verdict_path, csr_error **err)
{
  const char *log = annotation (st, ANN_LOG);
  cleanup_free char *default_log = NULL;
  if (log == NULL)
    {
      if (asprintf (&default_log, "%s/ctr.log", st->bundle) < 0)
        {
          default_log = NULL;
          return csr_error_set (err, ENOMEM, "the log path");
        }
      log = default_log;
    }
  else if (log[0] != '/')
    return csr_error_set (err, 0, ANN_LOG "='%s': not an absolute path", log);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (read_tail (log, &text, &len, err) < 0)
    return -1;
  len = csr_hook_k8s_strip (text, len);
  text[len] = '\0';

  cleanup_free char *conf = csr_find_policy ("silent-failure.conf");
  if (conf == NULL)
    return csr_error_set (err, ENOMEM, "find silent-failure.conf");
  struct csr_scan scan;
  memset (&scan, 0, sizeof scan);
  if (csr_scan_load (conf, &scan, err) < 0)
    return -1;
  const char *pattern = NULL;
  cleanup_free char *line = NULL;
  csr_scan_match (&scan, text, len, &pattern, &line);
  cleanup_free char *json = verdict_json (st->id, pattern, line, log);
  csr_scan_release (&scan);
  if (json == NULL)
    return csr_error_set (err, ENOMEM, "the verdict");
  return csr_write_file_atomic (verdict_path, json, strlen (json), 0600, err);
}

/* poststop: never fails (teardown must go on); problems are one line on stderr. */
static int
hook_scan (struct hook_state *st)
{
  if (!annotation_true (st, ANN_SCAN))
    return 0;
  cleanup_free char *verdict = NULL;
  if (asprintf (&verdict, "%s/" VERDICT_NAME, st->bundle) < 0)
    {
      verdict = NULL;
      hook_say ("out of memory");
      return 0;
    }
  csr_error *e = NULL;
  if (scan_log (st, verdict, &e) < 0)
    {
      /* No verdict rather than a stale one from an earlier run. */
      if (unlink (verdict) < 0 && errno != ENOENT)
        csr_error_wrap (&e, "(and the old %s stays)", verdict);
      hook_say ("container %s: no verdict: %s", st->id, csr_error_text (e));
      csr_error_free (e);
    }
  return 0;
}

/* ------------------------------------------------------------------ main */

/* Parse the state, load config.json, act.  The exit code. */
static int
run_stage (enum stage stage, const char *name, const char *text, size_t len, struct hook_state *st)
{
  int bad = stage == STAGE_GATE ? CSR_EXIT_USAGE : CSR_EXIT_OK;
  csr_error *e = NULL;
  if (state_parse (text, len, st, &e) < 0)
    {
      hook_say ("%s: %s", name, csr_error_text (e));
      csr_error_free (e);
      return bad;
    }
  cleanup_free char *config = NULL;
  if (asprintf (&config, "%s/config.json", st->bundle) < 0)
    config = NULL;
  if (config && oci_config_load (config, &st->config, &e) == 0)
    st->has_config = true;
  else if (stage == STAGE_GATE)
    {
      /* Without config.json there is no knowing what runs: refuse. */
      hook_say ("%s: container %s: %s", name, st->id, e ? csr_error_text (e) : "out of memory");
      csr_error_free (e);
      return CSR_EXIT_FAILED;
    }
  else
    csr_error_freep (&e); /* poststop: the state's annotations may do */
  if (stage != STAGE_GATE)
    return hook_scan (st);
  told.keep = true;
  int rc = hook_gate (st);
  if (rc != 0)
    log_refusal (st);
  told_release ();
  return rc;
}

static const char usage[]
    = "Usage: csrun hook STAGE\n"
      "An OCI hook: the runtime gives the container's state (JSON) on standard input.\n"
      "  prestart, createRuntime  gate the container's Python program when it has the\n"
      "                           annotation run.csrun.gate=true (policy: run.csrun.policy);\n"
      "                           exit 1 (the container does not start) when it is refused;\n"
      "                           the reasons on stderr and appended to BUNDLE/ctr.log\n"
      "                           when there is one (podman logs; crun drops stderr)\n"
      "  poststop                 scan its log (run.csrun.log, default BUNDLE/ctr.log) for\n"
      "                           silent failures when it has run.csrun.scan=true: the\n"
      "                           verdict goes to BUNDLE/csrun-verdict.json\n"
      "  other stages             nothing (exit 0)\n"
      "See contrib/oci-hooks.d for podman's hooks.d.\n";

int
cmd_hook (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      fputs (usage, stdout);
      return CSR_EXIT_OK;
    }
  if (argc != 2)
    {
      hook_say ("%s (try 'csrun hook --help')",
                argc < 2 ? "missing STAGE" : "too many arguments: only STAGE");
      return CSR_EXIT_USAGE;
    }
  const char *name = argv[1];
  enum stage stage;
  if (strcmp (name, "prestart") == 0 || strcmp (name, "createRuntime") == 0)
    stage = STAGE_GATE;
  else if (strcmp (name, "poststop") == 0)
    stage = STAGE_SCAN;
  else if (strcmp (name, "createContainer") == 0 || strcmp (name, "startContainer") == 0
           || strcmp (name, "poststart") == 0)
    stage = STAGE_NONE;
  else
    {
      hook_say ("unknown stage '%s' (prestart, createRuntime, createContainer, "
                "startContainer, poststart or poststop)",
                name);
      return CSR_EXIT_USAGE;
    }

  /* Read the whole state even when there is nothing to do: the runtime
   * writes it before it waits for us. */
  cleanup_free char *text = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  int bad = stage == STAGE_GATE ? CSR_EXIT_USAGE : CSR_EXIT_OK;
  if (csr_read_fd (0, STATE_MAX, &text, &len, &e) < 0)
    {
      hook_say ("%s: read the state: %s", name, csr_error_text (e));
      csr_error_free (e);
      return stage == STAGE_NONE ? CSR_EXIT_OK : bad;
    }
  if (stage == STAGE_NONE)
    return CSR_EXIT_OK;

  struct hook_state st;
  memset (&st, 0, sizeof st);
  int rc = run_stage (stage, name, text, len, &st);
  hook_state_release (&st);
  return rc;
}
