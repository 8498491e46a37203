/* csrun — sandbox files: the worker inside a running sandbox (files.h,
 * files-worker.h).  It has joined the sandbox's user and mount namespaces
 * (its / is the sandbox's) and cgroup; it resolves every path the client
 * names with openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS against that
 * /, and makes what a tar holds below directory descriptors
 * (files-tar.c). */
#include "config.h"
#include "files-worker.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../jail/caps.h"
#include "../jail/rlimit.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/pack.h"
#include "../util/syscalls.h"
#include "files-tar.h"

#define la csr_la

struct worker
{
  struct csr_files_work *w;
  int root; /* the sandbox's / */
  struct csr_files_limits lim;
  struct csr_files_stats st;
  char *path; /* the request's path, clean and absolute */
  bool slash; /* it ended with '/' */
  int type;   /* of what PATH names (GET, LS), -1: unknown */
  /* Listing records (LS, FIND), buffered. */
  char out[64 * 1024];
  size_t n_out;
};

/* ------------------------------------------------------------ paths in the sandbox */

/* PATH (clean, absolute) opened with FLAGS below the sandbox's /: its
 * symlinks (absolute ones too) and ".." resolve as inside, never beyond;
 * /proc's magic links are refused. */
static int
open_in (struct worker *k, const char *path, int flags, csr_error **err)
{
  struct open_how how = {
    .flags = (uint64_t)(flags | O_CLOEXEC),
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };
  const char *rel = path[1] ? path + 1 : ".";
  for (int tries = 0;; tries++)
    {
      int fd = (int)syscall (SYS_openat2, k->root, rel, &how, sizeof how);
      if (fd >= 0)
        return fd;
      /* EAGAIN: a rename raced with the lookup. */
      if (errno == EAGAIN && tries < 16)
        continue;
      if (errno == ENOSYS)
        return csr_error_set (err, ENOSYS, "sandbox files need openat2 (Linux 5.6)");
      return csr_error_errno (err, "%s", path);
    }
}

/* The directory PATH, made (with its missing parents, mode 0755) when
 * MKDIRS. */
static int
open_dir (struct worker *k, const char *path, bool mkdirs, csr_error **err)
{
  csr_error *e = NULL;
  int fd = open_in (k, path, O_RDONLY | O_DIRECTORY, &e);
  if (fd >= 0 || !mkdirs || e->status != ENOENT || strcmp (path, "/") == 0)
    {
      if (fd < 0)
        *err = e;
      return fd;
    }
  csr_error_free (e);
  const char *slash = strrchr (path, '/');
  cleanup_free char *parent = strndup (path, slash == path ? 1 : (size_t)(slash - path));
  if (parent == NULL)
    return csr_error_set (err, ENOMEM, "%s", path);
  cleanup_close int pfd = open_dir (k, parent, true, err);
  if (pfd < 0)
    return -1;
  if (mkdirat (pfd, slash + 1, 0755) < 0 && errno != EEXIST)
    return csr_error_errno (err, "mkdir %s", path);
  return open_in (k, path, O_RDONLY | O_DIRECTORY, err);
}

/* PATH's parent directory (made when MKDIRS) and its last component in
 * *LEAF (pointing into k->path's copy PATH). */
static int
open_parent (struct worker *k, const char *path, bool mkdirs, const char **leaf, csr_error **err)
{
  if (strcmp (path, "/") == 0)
    return csr_error_set (err, EISDIR, "/: the sandbox's root");
  const char *slash = strrchr (path, '/');
  cleanup_free char *parent = strndup (path, slash == path ? 1 : (size_t)(slash - path));
  if (parent == NULL)
    return csr_error_set (err, ENOMEM, "%s", path);
  *leaf = slash + 1;
  return open_dir (k, parent, mkdirs, err);
}

/* ------------------------------------------------------------ read, write */

static int
do_read (struct worker *k, csr_error **err)
{
  cleanup_close int fd = open_in (k, k->path, O_RDONLY | O_NOCTTY | O_NONBLOCK, err);
  if (fd < 0)
    return -1;
  struct stat s;
  if (fstat (fd, &s) < 0)
    return csr_error_errno (err, "%s", k->path);
  if (S_ISDIR (s.st_mode))
    return csr_error_set (err, EISDIR, "%s", k->path);
  if (!S_ISREG (s.st_mode))
    return csr_error_set (err, EINVAL, "%s: not a regular file", k->path);
  k->type = CSR_FT_FILE;
  if ((uint64_t)s.st_size > k->lim.max_bytes)
    return csr_error_set (err, EFBIG, "%s: %lld bytes, more than %llu (--max-size)", k->path,
                          (long long)s.st_size, (unsigned long long)k->lim.max_bytes);
  if (csr_pack_copy (k->w->data, fd, (uint64_t)s.st_size, NULL, err) < 0)
    return csr_error_wrap (err, "%s", k->path);
  k->st.files = 1;
  k->st.bytes = (uint64_t)s.st_size;
  return 0;
}

/* N bytes of the client's data; its end before them is an error. */
static int
read_data (int fd, void *buf, size_t n, csr_error **err)
{
  int r = csr_read_exact (fd, buf, n, "read the data", err);
  if (r > 0)
    return csr_error_set (err, EPIPE, "the data ended early (the client went away?)");
  return r;
}

static int
do_write (struct worker *k, csr_error **err)
{
  if (k->slash)
    return csr_error_set (err, EISDIR, "%s/: names a directory", k->path);
  const char *leaf;
  cleanup_close int pfd = open_parent (k, k->path, true, &leaf, err);
  if (pfd < 0)
    return -1;
  struct stat s;
  mode_t mode = 0644;
  if (fstatat (pfd, leaf, &s, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISDIR (s.st_mode))
        return csr_error_set (err, EISDIR, "%s", k->path);
      if (S_ISREG (s.st_mode))
        mode = s.st_mode & 0777;
    }
  if (k->w->req.mode >= 0)
    mode = (mode_t)k->w->req.mode & 0777;
  char tmp[CSR_TMP_NAME_MAX];
  int fd = csr_ftar_tmp_create (pfd, mode, tmp, err);
  if (fd < 0)
    return csr_error_wrap (err, "%s", k->path);
  /* Framed (files.h): the data ends with an empty frame, or it is not
   * complete (the client went away) and nothing is made. */
  uint64_t n = 0;
  static char buf[CSR_FILES_FRAME_MAX];
  int rc = 0;
  for (;;)
    {
      uint32_t len;
      if ((rc = read_data (k->w->data, &len, sizeof len, err)) < 0)
        break;
      if (len > CSR_FILES_FRAME_MAX)
        {
          rc = csr_error_set (err, EPROTO, "the data is malformed");
          break;
        }
      if (len == 0)
        break;
      if (n + len > k->lim.max_bytes)
        {
          rc = csr_error_set (err, EFBIG, "%s: more than %llu bytes (--max-size)", k->path,
                              (unsigned long long)k->lim.max_bytes);
          break;
        }
      if ((rc = read_data (k->w->data, buf, len, err)) < 0)
        break;
      if (csr_write_all (fd, buf, len, err) < 0)
        {
          rc = csr_error_wrap (err, "%s", k->path);
          break;
        }
      n += len;
    }
  if (rc == 0 && fchmod (fd, mode) < 0)
    rc = csr_error_errno (err, "%s: chmod", k->path);
  if (rc < 0)
    {
      csr_ftar_tmp_abort (pfd, tmp, fd);
      return -1;
    }
  if (csr_ftar_tmp_commit (pfd, tmp, fd, leaf, err) < 0)
    return csr_error_wrap (err, "%s", k->path);
  k->type = CSR_FT_FILE;
  k->st.files = 1;
  k->st.bytes = n;
  return 0;
}

/* ------------------------------------------------------------ get, put */

/* Does the request's path end in "." ("dir/.", "."): the contents of a
 * directory rather than the directory (as cp -r dir/. does)? */
static bool
contents_of (const char *raw)
{
  size_t n = strlen (raw);
  while (n > 1 && raw[n - 1] == '/')
    n--;
  return (n == 1 && raw[0] == '.') || (n >= 2 && raw[n - 1] == '.' && raw[n - 2] == '/');
}

static int
do_get (struct worker *k, csr_error **err)
{
  const char *leaf = ".";
  bool contents = strcmp (k->path, "/") == 0 || contents_of (k->w->req.path);
  cleanup_close int pfd = contents ? open_in (k, k->path, O_RDONLY | O_DIRECTORY, err)
                                   : open_parent (k, k->path, false, &leaf, err);
  if (pfd < 0)
    return -1;
  struct stat s;
  if (fstatat (pfd, leaf, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "%s", k->path);
  k->type = csr_files_type_of (s.st_mode);
  struct archive *a = csr_ftar_writer (k->w->data, err);
  if (a == NULL)
    return -1;
  if (csr_ftar_pack (a, pfd, leaf, leaf, &k->lim, &k->st, err) < 0)
    {
      la.archive_write_free (a);
      return csr_error_wrap (err, "%s", k->path);
    }
  return csr_ftar_writer_close (a, err);
}

static int
kind_of (struct worker *k, const char *path, csr_error **err)
{
  csr_error *e = NULL;
  cleanup_close int fd = open_in (k, path, O_PATH, &e);
  if (fd < 0)
    {
      int s = e->status;
      if (s == ENOENT)
        {
          csr_error_free (e);
          return CSR_FILES_MISSING;
        }
      *err = e;
      return -1;
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "%s", path);
  return S_ISDIR (st.st_mode) ? CSR_FILES_IS_DIR : CSR_FILES_IS_OTHER;
}

static int
do_put (struct worker *k, csr_error **err)
{
  struct archive *a = csr_ftar_reader (k->w->data, err);
  if (a == NULL)
    return -1;
  struct archive_entry *first = NULL;
  int r = la.archive_read_next_header (a, &first);
  int rc = -1;
  char top[CSR_FILES_PATH_MAX];
  if (r == ARCHIVE_EOF)
    rc = 0; /* nothing in it */
  else if (r < ARCHIVE_WARN)
    csr_error_set (err, csr_ftar_errno (a), "not a tar archive (%s)", la.archive_error_string (a));
  else if (k->w->req.raw_tar || csr_ftar_top (first, top, err) == 0)
    {
      const char *t = k->w->req.raw_tar ? NULL : top;
      int kind = kind_of (k, k->path, err);
      int place = kind < 0 ? -1 : csr_files_place (k->path, kind, k->slash, t, err);
      const char *leaf = NULL;
      int base = place < 0                       ? -1
                 : place == CSR_FILES_PLACE_INTO ? open_dir (k, k->path, true, err)
                                                 : open_parent (k, k->path, true, &leaf, err);
      if (base >= 0)
        {
          struct csr_ftar_dest d = { base, t, leaf, 0, 0755 };
          rc = csr_ftar_unpack (a, first, &d, &k->lim, &k->st, err);
          close (base);
        }
    }
  la.archive_read_free (a);
  return rc;
}

/* ------------------------------------------------------------ ls, find */

static int
flush_out (struct worker *k, csr_error **err)
{
  if (k->n_out && csr_write_all (k->w->data, k->out, k->n_out, err) < 0)
    return csr_error_wrap (err, "send the listing");
  k->n_out = 0;
  return 0;
}

/* One record for NAME in DIRFD (lstat S), as REL. */
static int
emit (struct worker *k, int dirfd, const char *name, const char *rel, const struct stat *s,
      csr_error **err)
{
  char target[CSR_FILES_PATH_MAX];
  struct csr_files_rec r = {
    .type = csr_files_type_of (s->st_mode),
    .mode = s->st_mode & 07777,
    .size = (uint64_t)s->st_size,
    .mtime = s->st_mtim.tv_sec,
    .mtime_ns = (uint32_t)s->st_mtim.tv_nsec,
    .path = (char *)rel,
  };
  if (r.type == CSR_FT_SYMLINK)
    {
      ssize_t n = readlinkat (dirfd, name, target, sizeof target - 1);
      target[n < 0 ? 0 : n] = '\0';
      r.target = target;
    }
  size_t need = sizeof (struct csr_files_rec) + 2 * CSR_FILES_PATH_MAX + 64;
  if (k->n_out + need > sizeof k->out && flush_out (k, err) < 0)
    return -1;
  size_t n = csr_files_rec_encode (&r, k->out + k->n_out, sizeof k->out - k->n_out);
  if (n == 0)
    return csr_files_note_add (&k->st.skipped, rel, "a name too long to list") < 0
               ? csr_error_set (err, ENOMEM, "list")
               : 0;
  k->n_out += n;
  return 0;
}

static int
ls_visit (void *ctx, int dirfd, const char *name, const char *rel, const struct stat *s,
          csr_error **err)
{
  struct worker *k = ctx;
  if (rel[0] == '\0')
    return 1; /* the listed directory itself */
  if (emit (k, dirfd, name, rel, s, err) < 0)
    return -1;
  return k->w->req.recursive ? 1 : 0;
}

static int
find_visit (void *ctx, int dirfd, const char *name, const char *rel, const struct stat *s,
            csr_error **err)
{
  struct worker *k = ctx;
  if (rel[0] == '\0')
    return 1;
  const char *pat = k->w->req.pattern;
  bool match = fnmatch (pat, strchr (pat, '/') ? rel : name, 0) == 0;
  if (match && emit (k, dirfd, name, rel, s, err) < 0)
    return -1;
  return 1;
}

/* Walk the directory FD with VISIT; a walk cut at --max-entries is a
 * listing marked truncated. */
static int
list_dir (struct worker *k, int fd, csr_ftar_visit_fn visit, csr_error **err)
{
  csr_error *e = NULL;
  /* The listed directory itself counts as an entry of the walk. */
  struct csr_files_limits lim = { k->lim.max_bytes, k->lim.max_entries + 1 };
  int rc = csr_ftar_walk (fd, ".", "", visit, k, &lim, &k->st, &e);
  if (k->st.entries > 0)
    k->st.entries--;
  if (rc < 0 && e && e->status == E2BIG)
    {
      csr_error_free (e);
      k->st.truncated = true;
      rc = 0;
    }
  else if (rc < 0)
    *err = e;
  if (rc == 0)
    rc = flush_out (k, err);
  return rc;
}

static int
do_ls (struct worker *k, csr_error **err)
{
  /* A symlink is listed as itself, unless it leads to a directory. */
  cleanup_close int fd = open_in (k, k->path, O_RDONLY | O_DIRECTORY, NULL);
  if (fd >= 0)
    {
      k->type = CSR_FT_DIR;
      return list_dir (k, fd, ls_visit, err);
    }
  const char *leaf;
  cleanup_close int pfd = open_parent (k, k->path, false, &leaf, err);
  if (pfd < 0)
    return -1;
  struct stat s;
  if (fstatat (pfd, leaf, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "%s", k->path);
  k->type = csr_files_type_of (s.st_mode);
  k->st.entries = 1;
  if (emit (k, pfd, leaf, leaf, &s, err) < 0)
    return -1;
  return flush_out (k, err);
}

static int
do_find (struct worker *k, csr_error **err)
{
  if (k->w->req.pattern == NULL || k->w->req.pattern[0] == '\0')
    return csr_error_set (err, EINVAL, "an empty pattern");
  cleanup_close int fd = open_in (k, k->path, O_RDONLY | O_DIRECTORY, err);
  if (fd < 0)
    return -1;
  k->type = CSR_FT_DIR;
  return list_dir (k, fd, find_visit, err);
}

/* ------------------------------------------------------------ the worker's life */

/* Not about the request: csrun itself failed. */
static bool
internal_error (int e)
{
  return e == ENOMEM || e == ENOSYS || e == EBADF || e == EFAULT || e == EMFILE || e == ENFILE;
}

static void
result (struct worker *k, csr_error *e)
{
  struct csr_jgen g;
  if (csr_jgen_init (&g, false, NULL) < 0)
    return;
  csr_jgen_map_open (&g);
  if (e)
    {
      int status = e->status; /* csr_error_text folds it into the message */
      csr_jgen_kv_str (&g, "error", csr_error_text (e));
      csr_jgen_kv_int (&g, "errno", status);
      csr_jgen_str (&g, "refused");
      csr_jgen_bool (&g, !internal_error (status));
    }
  else
    {
      csr_jgen_str (&g, "ok");
      csr_jgen_bool (&g, true);
    }
  if (k->path)
    csr_jgen_kv_str (&g, "path", k->path);
  if (k->type >= 0)
    csr_jgen_kv_str (&g, "type", csr_files_type_name (k->type));
  csr_jgen_kv_int (&g, "files", (long long)k->st.files);
  csr_jgen_kv_int (&g, "dirs", (long long)k->st.dirs);
  csr_jgen_kv_int (&g, "symlinks", (long long)k->st.symlinks);
  csr_jgen_kv_int (&g, "hardlinks", (long long)k->st.hardlinks);
  csr_jgen_kv_int (&g, "bytes", (long long)k->st.bytes);
  csr_jgen_kv_int (&g, "entries", (long long)k->st.entries);
  csr_jgen_str (&g, "truncated");
  csr_jgen_bool (&g, k->st.truncated);
  csr_files_gen_notes (&g, "skipped", &k->st.skipped);
  csr_files_gen_notes (&g, "refused", &k->st.refused);
  csr_jgen_map_close (&g);
  size_t len;
  char *s = csr_jgen_finish (&g, "the result", &len, NULL);
  if (s)
    csr_write_all (k->w->status, s, len, NULL);
  free (s);
}

/* SIGTERM (the client went away, the sandbox stops): no temporary file
 * left behind. */
static void
on_term (int sig)
{
  (void)sig;
  csr_ftar_tmp_remove ();
  _exit (143);
}

/* The sandbox's root (uid and gid 0 in its user namespace), then no way
 * to run or map code: whatever the sandbox's tree holds (a library, a
 * gconv module, a program) can only be data to this process. */
static int
become (struct worker *k, csr_error **err)
{
  if (csr_caps_become_ns_root (err) < 0)
    return -1;
  /* The sandbox's own limits (a file of at most its RLIMIT_FSIZE: past
   * it, EFBIG rather than SIGXFSZ). */
  signal (SIGXFSZ, SIG_IGN);
  if (k->w->sn && csr_rlimits_apply (k->w->sn, err) < 0)
    return -1;
  umask (0);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return csr_error_errno (err, "no_new_privs");
  const struct csr_seccomp *sc = k->w->lockdown;
  if (sc == NULL || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sc->prog) < 0)
    return csr_error_errno (err, "load the worker's seccomp filter");
  if (k->w->locale)
    uselocale (k->w->locale);
  k->root = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (k->root < 0)
    return csr_error_errno (err, "open the sandbox's /");
  return 0;
}

int
csr_files_work (void *arg)
{
  struct csr_files_work *w = arg;
  /* Only the data and status pipes go on (and stderr, the keeper's log). */
  int data = fcntl (w->data, F_DUPFD_CLOEXEC, 64), status = fcntl (w->status, F_DUPFD_CLOEXEC, 64);
  if (data < 0 || status < 0 || dup2 (data, 3) < 0 || dup2 (status, 4) < 0)
    return 125;
  csr_close_range_between (5, ~0U);
  w->data = 3;
  w->status = 4;
  struct sigaction sa = { .sa_handler = on_term };
  sigemptyset (&sa.sa_mask);
  sigaction (SIGTERM, &sa, NULL);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  static struct worker k;
  memset (&k, 0, sizeof k);
  k.w = w;
  k.root = -1;
  k.type = -1;
  k.lim = (struct csr_files_limits){ w->req.max_bytes, w->req.max_entries };
  csr_error *e = NULL;
  int rc = become (&k, &e);
  if (rc == 0)
    rc = csr_files_clean_path (w->workdir, w->req.path, &k.path, &k.slash, &e);
  static int (*const actions[]) (struct worker *, csr_error **) = {
    [CSR_FILES_READ] = do_read, [CSR_FILES_WRITE] = do_write, [CSR_FILES_GET] = do_get,
    [CSR_FILES_PUT] = do_put,   [CSR_FILES_LS] = do_ls,       [CSR_FILES_FIND] = do_find,
  };
  if (rc == 0)
    rc = actions[w->req.action](&k, &e);
  /* A failure to send because the client stopped reading (it failed on
   * its side, or went away) is said so: the client then tells its own
   * error.  Only a failed send: an error of ours (a cap, a missing file)
   * stays ours even when the client, having read the end of what we sent,
   * has closed its end already. */
  struct pollfd p = { w->data, POLLOUT, 0 };
  if (rc < 0 && w->req.action != CSR_FILES_WRITE && w->req.action != CSR_FILES_PUT && e
      && e->status == EPIPE && poll (&p, 1, 0) == 1 && (p.revents & POLLERR))
    {
      csr_error_free (e);
      e = NULL;
      csr_error_set (&e, EPIPE, "the client stopped reading");
    }
  /* The client sees the end of the data before the reply. */
  close (w->data);
  result (&k, rc < 0 ? e : NULL);
  csr_error_free (e);
  return rc < 0 ? 1 : 0;
}
