/* csrun sandbox cp|read|write|ls|find: files in and out of a running
 * sandbox (src/lib/sandbox/files.h): options -> one request to the keeper
 * with a pipe -> the data moved here (a tar made or extracted on the host
 * as the invoking user, stdin or stdout) -> output and exit code. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "sandbox.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/parse.h"
#include "util/termsafe.h"

struct files_opts
{
  const char *cmd;
  const char *args[3];
  size_t n_args, min_args, max_args;
  bool json, recursive;
  int mode;
  uint64_t max_bytes, max_entries;
};

enum
{
  OPT_JSON = 1000,
  OPT_MAX_SIZE,
  OPT_MAX_ENTRIES,
  OPT_MODE,
};

#define OPTION_JSON                                                                                \
  {                                                                                                \
    "json", OPT_JSON, NULL, 0, "Print JSON", 0                                                     \
  }
#define OPTION_MAX_SIZE                                                                            \
  {                                                                                                \
    "max-size", OPT_MAX_SIZE, "SIZE", 0, "At most SIZE bytes of file data (default 1G)", 0         \
  }
#define OPTION_MAX_ENTRIES                                                                         \
  {                                                                                                \
    "max-entries", OPT_MAX_ENTRIES, "N", 0, "At most N entries (default 100000)", 0                \
  }

static struct argp_option cp_options[] = {
  OPTION_JSON,
  OPTION_MAX_SIZE,
  OPTION_MAX_ENTRIES,
  { NULL, 0, NULL, 0, NULL, 0 },
};
static struct argp_option read_options[] = {
  OPTION_MAX_SIZE,
  { NULL, 0, NULL, 0, NULL, 0 },
};
static struct argp_option write_options[] = {
  OPTION_JSON,
  OPTION_MAX_SIZE,
  { "mode", OPT_MODE, "MODE", 0, "Permission bits in octal (default: the file's, else 0644)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};
static struct argp_option ls_options[] = {
  OPTION_JSON,
  { "recursive", 'R', NULL, 0, "List the directories below too", 0 },
  OPTION_MAX_ENTRIES,
  { NULL, 0, NULL, 0, NULL, 0 },
};
static struct argp_option find_options[] = {
  OPTION_JSON,
  OPTION_MAX_ENTRIES,
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_files (int key, char *arg, struct argp_state *state)
{
  struct files_opts *o = state->input;
  csr_error *e = NULL;
  uint64_t v;
  switch (key)
    {
    case OPT_JSON:
      o->json = true;
      break;
    case 'R':
      o->recursive = true;
      break;
    case OPT_MAX_SIZE:
      if (csr_parse_size (arg, 1ULL << 50, &o->max_bytes, &e) < 0 || o->max_bytes == 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-size '%s'", arg);
      break;
    case OPT_MAX_ENTRIES:
      if (csr_parse_uint (arg, 1, 100000000, &o->max_entries, &e) < 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --max-entries '%s'", arg);
      break;
    case OPT_MODE:
      {
        char *end;
        v = strtoul (arg, &end, 8);
        if (end == arg || *end || v > 0777)
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --mode '%s' (octal, at most 0777)", arg);
        o->mode = (int)v;
        break;
      }
    case ARGP_KEY_ARG:
      if (o->n_args == o->max_args)
        sbx_arg_extra (state, arg);
      o->args[o->n_args++] = arg;
      break;
    case ARGP_KEY_END:
      if (o->n_args < o->min_args)
        argp_failure (state, CSR_EXIT_USAGE, 0, "missing arguments (see --help)");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  csr_error_free (e);
  return 0;
}

static int
parse_args (struct files_opts *o, struct argp_option *options, const char *args, const char *doc,
            int argc, char **argv)
{
  o->mode = -1;
  o->max_bytes = CSR_FILES_MAX_BYTES_DEFAULT;
  o->max_entries = CSR_FILES_MAX_ENTRIES_DEFAULT;
  char full[1024];
  snprintf (full, sizeof full, "%s\vSee csrun-sandbox(1), FILES.", doc);
  struct argp argp = { options, parse_files, args, full, NULL, NULL, NULL };
  return argp_parse (&argp, argc, argv, 0, NULL, o) != 0 ? CSR_EXIT_USAGE : 0;
}

/* ------------------------------------------------------------ talking to the keeper */

struct call
{
  const char *cmd;
  int dir;
  char id[CSR_SANDBOX_ID_LEN + 1];
  struct csr_files_req req;
  int p[2]; /* the pipe */
  int sock;
  struct csr_files_stats st;
};

static void
call_close_pipe (struct call *c)
{
  for (int i = 0; i < 2; i++)
    if (c->p[i] >= 0)
      {
        close (c->p[i]);
        c->p[i] = -1;
      }
}

static void
call_release (struct call *c)
{
  call_close_pipe (c);
  if (c->sock >= 0)
    close (c->sock);
  if (c->dir >= 0)
    close (c->dir);
  csr_files_stats_release (&c->st);
}

static int
call_open (struct call *c, const char *id, bool to_sandbox, int *code)
{
  c->dir = c->sock = c->p[0] = c->p[1] = -1;
  if ((c->dir = sbx_enter (c->cmd, id, c->id, code)) < 0)
    return -1;
  if (pipe2 (c->p, O_CLOEXEC) < 0)
    {
      *code = sbx_fail (c->cmd, NULL, CSR_EXIT_INTERNAL);
      return -1;
    }
  csr_error *e = NULL;
  int give = to_sandbox ? 0 : 1;
  c->sock = csr_files_start (c->dir, &c->req, c->p[give], &e);
  close (c->p[give]);
  c->p[give] = -1;
  if (c->sock < 0)
    {
      *code = sbx_fail (c->cmd, e, CSR_EXIT_INTERNAL);
      return -1;
    }
  return 0;
}

/* Open the sandbox ID and send REQ with one end of a new pipe (the read
 * end when TO_SANDBOX); the other is c->p[1] (TO_SANDBOX) or c->p[0].  On
 * an error: printed, *CODE its exit code, C released. */
static int
call_start (struct call *c, const char *id, bool to_sandbox, int *code)
{
  if (call_open (c, id, to_sandbox, code) == 0)
    return 0;
  call_release (c);
  return -1;
}

/* The reply; LOCAL (may be NULL) is what failed here meanwhile: the
 * worker's error comes first (it is why the data stopped), then LOCAL.
 * Returns 0 or the exit code, printed. */
static int
call_finish (struct call *c, csr_error *local)
{
  call_close_pipe (c);
  csr_error *e = NULL;
  bool refused = false;
  int rc = csr_files_finish (c->sock, &c->st, &refused, &e);
  if (rc < 0 && local && c->st.error_errno == EPIPE)
    {
      /* The worker could not send: this side stopped reading, for LOCAL. */
      csr_error_free (e);
      return sbx_fail (c->cmd, local, SBX_EXIT_REFUSED);
    }
  if (rc < 0)
    {
      csr_error_free (local);
      return sbx_fail (c->cmd, e, refused ? SBX_EXIT_REFUSED : CSR_EXIT_INTERNAL);
    }
  if (local)
    return sbx_fail (c->cmd, local, SBX_EXIT_REFUSED);
  return 0;
}

/* ------------------------------------------------------------ output */

/* Skipped and refused entries on stderr (without --json). */
static void
say_notes (const char *cmd, const char *what, const struct csr_files_notes *n)
{
  for (size_t i = 0; i < n->n; i++)
    {
      char *p = csr_termsafe_str (n->v[i].path);
      fprintf (stderr, "csrun sandbox %s: %s %s: %s\n", cmd, what, p ? p : "?", n->v[i].reason);
      free (p);
    }
  if (n->more)
    fprintf (stderr, "csrun sandbox %s: %s %llu more\n", cmd, what, (unsigned long long)n->more);
}

/* ------------------------------------------------------------ cp */

static int
cp_report (struct call *c, const struct files_opts *o, const char *dir,
           struct csr_files_stats *counts, const struct csr_files_notes *skipped,
           const struct csr_files_notes *refused)
{
  uint64_t n_refused = refused->n + refused->more;
  int code = n_refused ? SBX_EXIT_REFUSED : 0;
  if (o->json)
    {
      struct csr_jgen w;
      csr_error *e = NULL;
      if (csr_jgen_init (&w, false, &e) < 0)
        return sbx_fail ("cp", e, CSR_EXIT_INTERNAL);
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "sandbox", c->id);
      csr_jgen_kv_str (&w, "direction", dir);
      csr_jgen_kv_str (&w, "source", o->args[0]);
      csr_jgen_kv_str (&w, "destination", o->args[1]);
      csr_jgen_kv_int (&w, "files", (long long)counts->files);
      csr_jgen_kv_int (&w, "dirs", (long long)counts->dirs);
      csr_jgen_kv_int (&w, "symlinks", (long long)counts->symlinks);
      csr_jgen_kv_int (&w, "hardlinks", (long long)counts->hardlinks);
      csr_jgen_kv_int (&w, "bytes", (long long)counts->bytes);
      csr_files_gen_notes (&w, "skipped", skipped);
      csr_files_gen_notes (&w, "refused", refused);
      csr_jgen_map_close (&w);
      int rc = sbx_print_doc (&w, "cp");
      if (rc)
        return rc;
    }
  else
    {
      say_notes ("cp", "skipped", skipped);
      say_notes ("cp", "refused", refused);
    }
  if (n_refused)
    fprintf (stderr, "csrun sandbox cp: %llu entr%s refused (the rest was copied)\n",
             (unsigned long long)n_refused, n_refused == 1 ? "y" : "ies");
  return code;
}

/* A host path (or "-") into the sandbox. */
static int
cp_in (struct files_opts *o, const char *src, const char *id, const char *dst)
{
  bool raw = strcmp (src, "-") == 0;
  struct stat sb;
  if (!raw && lstat (src, &sb) < 0)
    {
      csr_error *e = NULL;
      csr_error_errno (&e, "%s", src);
      return sbx_fail ("cp", e, SBX_EXIT_REFUSED);
    }
  struct call c = { .cmd = "cp" };
  c.req = (struct csr_files_req){ .action = CSR_FILES_PUT,
                                  .path = dst,
                                  .raw_tar = raw,
                                  .mode = -1,
                                  .max_bytes = o->max_bytes,
                                  .max_entries = o->max_entries };
  struct csr_files_stats mine = { 0 };
  int code;
  if (call_start (&c, id, true, &code) < 0)
    return code;
  csr_error *local = NULL;
  if (raw)
    {
      uint64_t n = 0;
      bool stopped;
      csr_files_pump (STDIN_FILENO, "read the standard input", c.p[1], "send the data", c.sock, &n,
                      &stopped, &local);
    }
  else
    {
      struct csr_files_limits lim = { o->max_bytes, o->max_entries };
      if (csr_files_host_pack (c.p[1], src, &lim, &mine, &local) < 0 && local
          && local->status == EPIPE)
        csr_error_freep (&local); /* the worker stopped reading: its reply says why */
    }
  code = call_finish (&c, local);
  if (code == 0)
    code = cp_report (&c, o, "in", &c.st, &mine.skipped, &c.st.refused);
  csr_files_stats_release (&mine);
  call_release (&c);
  return code;
}

/* From the sandbox to a host path (or "-"). */
static int
cp_out (struct files_opts *o, const char *id, const char *src, const char *dst)
{
  struct call c = { .cmd = "cp" };
  c.req = (struct csr_files_req){ .action = CSR_FILES_GET,
                                  .path = src,
                                  .mode = -1,
                                  .max_bytes = o->max_bytes,
                                  .max_entries = o->max_entries };
  bool to_stdout = strcmp (dst, "-") == 0;
  if (to_stdout && isatty (STDOUT_FILENO))
    {
      fprintf (stderr, "csrun sandbox cp: refusing to write a tar to a terminal\n");
      return CSR_EXIT_USAGE;
    }
  int code;
  if (call_start (&c, id, false, &code) < 0)
    return code;
  csr_error *local = NULL;
  struct csr_files_stats mine = { 0 };
  if (to_stdout)
    {
      uint64_t n = 0;
      bool stopped;
      csr_files_pump (c.p[0], "receive the data", STDOUT_FILENO, "write the standard output", -1,
                      &n, &stopped, &local);
    }
  else
    {
      struct csr_files_limits lim = { o->max_bytes, o->max_entries };
      csr_files_host_unpack (c.p[0], dst, &lim, &mine, &local);
    }
  code = call_finish (&c, local);
  if (code == 0)
    code = cp_report (&c, o, "out", to_stdout ? &c.st : &mine, &c.st.skipped, &mine.refused);
  csr_files_stats_release (&mine);
  call_release (&c);
  return code;
}

int
cmd_sandbox_cp (int argc, char **argv)
{
  struct files_opts o = { .cmd = "cp", .min_args = 2, .max_args = 2 };
  int rc = parse_args (&o, cp_options, "SRC ID:DST\nID:SRC DST",
                       "Copy files and directories into or out of a running sandbox (a tar "
                       "stream; '-' is a tar on stdin or stdout).  Symlinks are copied as "
                       "links, never followed.",
                       argc, argv);
  if (rc)
    return rc;
  signal (SIGPIPE, SIG_IGN);
  cleanup_free char *sid = NULL, *spath = NULL, *did = NULL, *dpath = NULL;
  bool from = csr_files_split_arg (o.args[0], &sid, &spath);
  bool to = csr_files_split_arg (o.args[1], &did, &dpath);
  if (from == to)
    {
      fprintf (stderr, "csrun sandbox cp: %s\n",
               from ? "copying from one sandbox to another is not supported"
                    : "one of SRC and DST must be ID:PATH (a host path with ':' before any "
                      "'/': write it ./PATH)");
      return CSR_EXIT_USAGE;
    }
  return to ? cp_in (&o, o.args[0], did, dpath) : cp_out (&o, sid, spath, o.args[1]);
}

/* ------------------------------------------------------------ read, write */

int
cmd_sandbox_read (int argc, char **argv)
{
  struct files_opts o = { .cmd = "read", .min_args = 2, .max_args = 2 };
  int rc = parse_args (&o, read_options, "ID PATH",
                       "Write the bytes of the file PATH of a running sandbox on stdout "
                       "(symlinks followed inside the sandbox).",
                       argc, argv);
  if (rc)
    return rc;
  signal (SIGPIPE, SIG_IGN);
  struct call c = { .cmd = "read" };
  c.req = (struct csr_files_req){ .action = CSR_FILES_READ,
                                  .path = o.args[1],
                                  .mode = -1,
                                  .max_bytes = o.max_bytes,
                                  .max_entries = o.max_entries };
  int code;
  if (call_start (&c, o.args[0], false, &code) < 0)
    return code;
  csr_error *local = NULL;
  uint64_t n = 0;
  bool stopped;
  csr_files_pump (c.p[0], "receive the data", STDOUT_FILENO, "write the standard output", -1, &n,
                  &stopped, &local);
  code = call_finish (&c, local);
  call_release (&c);
  return code;
}

int
cmd_sandbox_write (int argc, char **argv)
{
  struct files_opts o = { .cmd = "write", .min_args = 2, .max_args = 2 };
  int rc = parse_args (&o, write_options, "ID PATH",
                       "Write stdin to the file PATH of a running sandbox (its parent "
                       "directories made; the file replaced whole, never partly written).",
                       argc, argv);
  if (rc)
    return rc;
  signal (SIGPIPE, SIG_IGN);
  struct call c = { .cmd = "write" };
  c.req = (struct csr_files_req){ .action = CSR_FILES_WRITE,
                                  .path = o.args[1],
                                  .mode = o.mode,
                                  .max_bytes = o.max_bytes,
                                  .max_entries = o.max_entries };
  int code;
  if (call_start (&c, o.args[0], true, &code) < 0)
    return code;
  csr_error *local = NULL;
  uint64_t n = 0;
  bool stopped;
  csr_files_send_framed (STDIN_FILENO, "read the standard input", c.p[1], c.sock, &n, &stopped,
                         &local);
  code = call_finish (&c, local);
  if (code == 0 && o.json)
    {
      struct csr_jgen w;
      csr_error *e = NULL;
      if (csr_jgen_init (&w, false, &e) < 0)
        code = sbx_fail ("write", e, CSR_EXIT_INTERNAL);
      else
        {
          csr_jgen_map_open (&w);
          csr_jgen_kv_str (&w, "sandbox", c.id);
          csr_jgen_kv_str (&w, "path", c.st.path);
          csr_jgen_kv_int (&w, "bytes", (long long)c.st.bytes);
          csr_jgen_map_close (&w);
          code = sbx_print_doc (&w, "write");
        }
    }
  call_release (&c);
  return code;
}

/* ------------------------------------------------------------ ls, find */

static int
rec_cmp (const void *a, const void *b)
{
  return strcmp (((const struct csr_files_rec *)a)->path, ((const struct csr_files_rec *)b)->path);
}

static void
mode_string (const struct csr_files_rec *r, char s[11])
{
  static const char types[] = "?-dlpscb";
  s[0] = types[r->type >= 0 && r->type <= CSR_FT_BLOCK ? r->type : 0];
  static const char rwx[] = "rwxrwxrwx";
  for (int i = 0; i < 9; i++)
    s[1 + i] = (r->mode & (0400u >> i)) ? rwx[i] : '-';
  if (r->mode & 04000)
    s[3] = s[3] == 'x' ? 's' : 'S';
  if (r->mode & 02000)
    s[6] = s[6] == 'x' ? 's' : 'S';
  if (r->mode & 01000)
    s[9] = s[9] == 'x' ? 't' : 'T';
  s[10] = '\0';
}

/* "/work" + "a/b" */
static char *
join (const char *dir, const char *rel)
{
  char *s = NULL;
  if (asprintf (&s, "%s%s%s", dir, strcmp (dir, "/") == 0 ? "" : "/", rel) < 0)
    return NULL;
  return s;
}

static void
gen_rec (struct csr_jgen *w, const struct csr_files_rec *r, const char *dir, bool with_name)
{
  char mtime[32], mode[8];
  sbx_fmt_time (r->mtime, mtime, sizeof mtime);
  snprintf (mode, sizeof mode, "%04o", (unsigned)r->mode);
  csr_jgen_map_open (w);
  if (with_name)
    csr_jgen_kv_str (w, "name", r->path);
  cleanup_free char *full = dir ? join (dir, r->path) : NULL;
  csr_jgen_kv_str (w, "path", full ? full : r->path);
  csr_jgen_kv_str (w, "type", csr_files_type_name (r->type));
  csr_jgen_kv_int (w, "size", (long long)r->size);
  csr_jgen_kv_str (w, "mode", mode);
  csr_jgen_kv_str (w, "mtime", mtime);
  if (r->target)
    csr_jgen_kv_str (w, "target", r->target);
  csr_jgen_map_close (w);
}

static int
print_line (const char *line)
{
  bool tty = isatty (STDOUT_FILENO);
  char *safe = tty ? csr_termsafe_str (line) : NULL;
  int rc = printf ("%s\n", safe ? safe : line);
  free (safe);
  return rc < 0 ? -1 : 0;
}

static void
say_truncated (const struct call *c, const struct files_opts *o)
{
  say_notes (o->cmd, "skipped", &c->st.skipped);
  if (c->st.truncated)
    fprintf (stderr, "csrun sandbox %s: stopped after %llu entries (--max-entries)\n", o->cmd,
             (unsigned long long)o->max_entries);
}

/* The listing of C (LS or FIND) on stdout; DIR the listed directory. */
static int
print_listing (struct call *c, const struct files_opts *o, struct csr_files_rec *v, size_t n,
               bool find)
{
  qsort (v, n, sizeof *v, rec_cmp);
  const char *dir = c->st.path ? c->st.path : "/";
  /* A single entry that is not a directory: its name is its own. */
  bool single = !find && strcmp (c->st.type, "dir") != 0;
  const char *parent = NULL;
  cleanup_free char *pdir = NULL;
  if (single)
    {
      pdir = strdup (dir);
      char *slash = pdir ? strrchr (pdir, '/') : NULL;
      if (slash)
        *(slash == pdir ? slash + 1 : slash) = '\0';
      parent = pdir;
    }
  if (o->json)
    {
      struct csr_jgen w;
      csr_error *e = NULL;
      if (csr_jgen_init (&w, false, &e) < 0)
        return sbx_fail (o->cmd, e, CSR_EXIT_INTERNAL);
      csr_jgen_map_open (&w);
      csr_jgen_kv_str (&w, "sandbox", c->id);
      csr_jgen_kv_str (&w, "path", dir);
      if (find)
        csr_jgen_kv_str (&w, "pattern", c->req.pattern);
      else
        csr_jgen_kv_str (&w, "type", c->st.type);
      csr_jgen_str (&w, find ? "matches" : "entries");
      csr_jgen_array_open (&w);
      for (size_t i = 0; i < n; i++)
        gen_rec (&w, &v[i], single ? parent : dir, !find);
      csr_jgen_array_close (&w);
      csr_jgen_str (&w, "truncated");
      csr_jgen_bool (&w, c->st.truncated);
      csr_files_gen_notes (&w, "skipped", &c->st.skipped);
      csr_jgen_map_close (&w);
      int rc = sbx_print_doc (&w, o->cmd);
      say_truncated (c, o);
      return rc;
    }
  for (size_t i = 0; i < n; i++)
    {
      const struct csr_files_rec *r = &v[i];
      cleanup_free char *line = NULL;
      cleanup_free char *full = find ? join (dir, r->path) : NULL;
      char mode[11], mtime[32];
      mode_string (r, mode);
      sbx_fmt_time (r->mtime, mtime, sizeof mtime);
      int len
          = find ? asprintf (&line, "%s", full ? full : r->path)
                 : asprintf (&line, "%s %10llu %s %s%s%s", mode, (unsigned long long)r->size, mtime,
                             r->path, r->target ? " -> " : "", r->target ? r->target : "");
      if (len < 0 || print_line (line) < 0)
        return CSR_EXIT_INTERNAL;
    }
  say_truncated (c, o);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

static int
listing (struct files_opts *o, const char *id, struct csr_files_req *req, bool find)
{
  signal (SIGPIPE, SIG_IGN);
  struct call c = { .cmd = o->cmd, .req = *req };
  int code;
  if (call_start (&c, id, false, &code) < 0)
    return code;
  csr_error *local = NULL;
  struct csr_files_rec *v = NULL;
  size_t n = 0;
  /* The worker stops at max_entries (plus a single entry's listing). */
  csr_files_read_list (c.p[0], o->max_entries + 1, &v, &n, &local);
  code = call_finish (&c, local);
  if (code == 0)
    code = print_listing (&c, o, v, n, find);
  csr_files_list_free (v, n);
  call_release (&c);
  return code;
}

int
cmd_sandbox_ls (int argc, char **argv)
{
  struct files_opts o = { .cmd = "ls", .min_args = 0, .max_args = 2 };
  int rc = parse_args (&o, ls_options, "\nID [PATH]",
                       "Without ID: list the sandboxes.  With ID: list the directory PATH "
                       "(default: the working directory) of a running sandbox: type, mode, "
                       "size, mtime (UTC), name, a symlink's target.",
                       argc, argv);
  if (rc)
    return rc;
  if (o.n_args == 0)
    {
      if (o.recursive || o.max_entries != CSR_FILES_MAX_ENTRIES_DEFAULT)
        {
          fprintf (stderr, "csrun sandbox ls: -R and --max-entries need an ID\n");
          return CSR_EXIT_USAGE;
        }
      return sbx_list_sandboxes (o.json);
    }
  struct csr_files_req req = { .action = CSR_FILES_LS,
                               .path = o.n_args > 1 ? o.args[1] : ".",
                               .recursive = o.recursive,
                               .mode = -1,
                               .max_bytes = o.max_bytes,
                               .max_entries = o.max_entries };
  return listing (&o, o.args[0], &req, false);
}

int
cmd_sandbox_find (int argc, char **argv)
{
  struct files_opts o = { .cmd = "find", .min_args = 2, .max_args = 3 };
  int rc = parse_args (&o, find_options, "ID PATTERN [PATH]",
                       "Find the entries below PATH (default: the working directory) of a "
                       "running sandbox whose name matches the glob PATTERN (or whose path "
                       "below PATH does, when PATTERN has a '/').",
                       argc, argv);
  if (rc)
    return rc;
  struct csr_files_req req = { .action = CSR_FILES_FIND,
                               .path = o.n_args > 2 ? o.args[2] : ".",
                               .pattern = o.args[1],
                               .mode = -1,
                               .max_bytes = o.max_bytes,
                               .max_entries = o.max_entries };
  return listing (&o, o.args[0], &req, true);
}
