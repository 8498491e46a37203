/* csrun exec: run another process in a running container: its namespaces,
 * its cgroup, its seccomp profile; the process from --process (a
 * runtime-spec "process" object) or from the command line. */
#include "config.h"
#include "oci.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "jail/oci-child.h"
#include "jail/seccomp.h"
#include "oci/cgroup.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/parse.h"

struct exec_opts
{
  const char *process;
  const char *pid_file;
  const char *console_socket;
  const char *cwd;
  const char *user;
  const char *env[64];
  size_t n_env;
  uint64_t preserve_fds;
  bool detach;
  bool tty;
  const char *id;
  char **args;
  int n_args;
};

enum
{
  OPT_PROCESS = 'p',
  OPT_PID_FILE = 1000,
  OPT_CONSOLE_SOCKET,
  OPT_PRESERVE_FDS,
  OPT_CWD,
  OPT_ENV,
  OPT_IGNORED_ARG,
  OPT_IGNORED,
};

static struct argp_option exec_options[] = {
  { "process", OPT_PROCESS, "FILE", 0, "The process to run: a runtime-spec process object", 0 },
  { "pid-file", OPT_PID_FILE, "FILE", 0, "Write the new process's host pid to FILE", 0 },
  { "console-socket", OPT_CONSOLE_SOCKET, "SOCKET", 0,
    "Send the pseudo-terminal's master here (with --tty)", 0 },
  { "tty", 't', NULL, 0, "Give the process a terminal", 0 },
  { "detach", 'd', NULL, 0, "Return once the process runs", 0 },
  { "preserve-fds", OPT_PRESERVE_FDS, "N", 0, "Pass N more descriptors (3 ..)", 0 },
  { "cwd", OPT_CWD, "DIR", 0, "Working directory (without --process)", 0 },
  { "env", OPT_ENV, "KEY=VALUE", 0, "Environment variable (without --process); repeatable", 0 },
  { "user", 'u', "UID[:GID]", 0, "User (without --process)", 0 },
  { "cap", 'c', "CAP", 0, "Accepted for runc compatibility (the container's capabilities apply)",
    0 },
  { "no-new-privs", OPT_IGNORED, NULL, 0, "Accepted (the container's setting applies)", 0 },
  { "apparmor", OPT_IGNORED_ARG, "PROFILE", 0, "Accepted, ignored", 0 },
  { "process-label", OPT_IGNORED_ARG, "LABEL", 0, "Accepted, ignored", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_exec (int key, char *arg, struct argp_state *state)
{
  struct exec_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case OPT_PROCESS:
      o->process = arg;
      break;
    case OPT_PID_FILE:
      o->pid_file = arg;
      break;
    case OPT_CONSOLE_SOCKET:
      o->console_socket = arg;
      break;
    case 't':
      o->tty = true;
      break;
    case 'd':
      o->detach = true;
      break;
    case OPT_PRESERVE_FDS:
      if (csr_parse_uint (arg, 0, 4096, &o->preserve_fds, &e) < 0)
        {
          argp_failure (state, 1, 0, "invalid --preserve-fds: %s", e->msg);
          csr_error_free (e);
        }
      break;
    case OPT_CWD:
      o->cwd = arg;
      break;
    case OPT_ENV:
      if (o->n_env < 64)
        o->env[o->n_env++] = arg;
      break;
    case 'u':
      o->user = arg;
      break;
    case 'c':
    case OPT_IGNORED:
    case OPT_IGNORED_ARG:
      break;
    case ARGP_KEY_ARG:
      o->id = arg;
      o->args = state->argv + state->next;
      o->n_args = state->argc - state->next;
      state->next = state->argc;
      break;
    case ARGP_KEY_END:
      if (o->id == NULL)
        argp_failure (state, 1, 0, "missing container ID");
      if (o->process == NULL && o->n_args == 0)
        argp_failure (state, 1, 0, "give --process FILE or a command after the ID");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

/* A config document around the process: from --process, else from the
 * command line and the container's own process (env, user, capabilities). */
static char *
process_document (const struct exec_opts *o, const struct oci_config *ctr, csr_error **err)
{
  if (o->process)
    {
      cleanup_free char *text = NULL;
      size_t len = 0;
      if (csr_read_file (o->process, 4 << 20, &text, &len, err) < 0)
        return NULL;
      char *doc = NULL;
      if (asprintf (&doc, "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"process\":%s}",
                    text)
          < 0)
        csr_error_set (err, ENOMEM, "process document");
      return doc;
    }
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return csr_error_set (err, ENOMEM, "process document"), NULL;
#define STR(s) yajl_gen_string (y, (const unsigned char *)(s), strlen (s))
  yajl_gen_map_open (y);
  STR ("ociVersion");
  STR ("1.0.2");
  STR ("root");
  yajl_gen_map_open (y);
  STR ("path");
  STR ("/");
  yajl_gen_map_close (y);
  STR ("process");
  yajl_gen_map_open (y);
  STR ("terminal");
  yajl_gen_bool (y, o->tty);
  STR ("cwd");
  STR (o->cwd ? o->cwd : ctr->cwd);
  STR ("args");
  yajl_gen_array_open (y);
  for (int i = 0; i < o->n_args; i++)
    STR (o->args[i]);
  yajl_gen_array_close (y);
  STR ("env");
  yajl_gen_array_open (y);
  for (size_t i = 0; i < ctr->n_env; i++)
    STR (ctr->env[i]);
  for (size_t i = 0; i < o->n_env; i++)
    STR (o->env[i]);
  yajl_gen_array_close (y);
  STR ("user");
  yajl_gen_map_open (y);
  unsigned long uid = ctr->uid, gid = ctr->gid;
  if (o->user)
    {
      char *end;
      uid = strtoul (o->user, &end, 10);
      gid = *end == ':' ? strtoul (end + 1, NULL, 10) : uid;
    }
  STR ("uid");
  yajl_gen_integer (y, (long long)uid);
  STR ("gid");
  yajl_gen_integer (y, (long long)gid);
  yajl_gen_map_close (y);
  STR ("noNewPrivileges");
  yajl_gen_bool (y, ctr->no_new_privileges);
  yajl_gen_map_close (y);
  yajl_gen_map_close (y);
#undef STR
  const unsigned char *buf;
  size_t len;
  char *doc = NULL;
  if (yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok)
    doc = strndup ((const char *)buf, len);
  yajl_gen_free (y);
  if (doc == NULL)
    csr_error_set (err, ENOMEM, "process document");
  return doc;
}

static const struct
{
  const char *name;
  int flag;
} ns_kinds[] = {
  /* The user namespace first (it owns the others), the mount namespace last
   * (it changes our root). */
  { "user", CLONE_NEWUSER }, { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS },
  { "net", CLONE_NEWNET },   { "pid", CLONE_NEWPID }, { "cgroup", CLONE_NEWCGROUP },
  { "mnt", CLONE_NEWNS },
};
#define N_NS (sizeof ns_kinds / sizeof ns_kinds[0])

/* Open the namespaces of PID that differ from ours. */
static int
open_namespaces (pid_t pid, int fds[N_NS], csr_error **err)
{
  for (size_t i = 0; i < N_NS; i++)
    {
      char theirs[64], ours[64];
      snprintf (theirs, sizeof theirs, "/proc/%d/ns/%s", (int)pid, ns_kinds[i].name);
      snprintf (ours, sizeof ours, "/proc/self/ns/%s", ns_kinds[i].name);
      struct stat a, b;
      fds[i] = -1;
      if (stat (theirs, &a) < 0)
        {
          if (errno == ENOENT && i != N_NS - 1)
            continue; /* a kernel without that kind */
          return csr_error_errno (err, "namespace %s of pid %d", ns_kinds[i].name, (int)pid);
        }
      if (stat (ours, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
        continue;
      fds[i] = open (theirs, O_RDONLY | O_CLOEXEC);
      if (fds[i] < 0)
        return csr_error_errno (err, "open %s", theirs);
    }
  return 0;
}

struct exec_ctx
{
  struct oci_state st;
  struct oci_config ctr;
  struct oci_config proc;
  struct csr_seccomp *seccomp;
  int ns[N_NS];
  int console;
  int pid_file;
  int root; /* the container's root, when it shares our mount namespace (it was chrooted) */
  int procs[OCI_CG_MAX_DIRS + 1]; /* cgroup.procs of the container's cgroup dirs */
  size_t n_procs;
};

static void
exec_ctx_release (struct exec_ctx *x)
{
  oci_state_release (&x->st);
  oci_config_release (&x->ctr);
  oci_config_release (&x->proc);
  csr_seccomp_free (x->seccomp);
  for (size_t i = 0; i < N_NS; i++)
    if (x->ns[i] >= 0)
      close (x->ns[i]);
  if (x->console >= 0)
    close (x->console);
  if (x->pid_file >= 0)
    close (x->pid_file);
  if (x->root >= 0)
    close (x->root);
  for (size_t i = 0; i < x->n_procs; i++)
    close (x->procs[i]);
}

static int
open_procs (struct exec_ctx *x, const char *dir, csr_error **err)
{
  if (x->n_procs >= sizeof x->procs / sizeof x->procs[0])
    return 0;
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/cgroup.procs", dir);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open %s", path);
  x->procs[x->n_procs++] = fd;
  return 0;
}

/* Everything read from the host before we enter the container. */
static int
prepare (const struct csr_global *g, const struct exec_opts *o, const char *root,
         struct exec_ctx *x, csr_error **err)
{
  if (oci_id_check (o->id, err) < 0 || oci_state_load (root, o->id, &x->st, err) < 0)
    return -1;
  enum oci_status s = oci_state_status (&x->st);
  if (s != OCI_RUNNING && s != OCI_CREATED)
    return csr_error_set (err, 0, "cannot exec in container '%s': it is %s", o->id,
                          oci_status_name (s));
  if (x->st.config_path == NULL || oci_config_load (x->st.config_path, &x->ctr, err) < 0)
    return csr_error_wrap (err, "the container's config");
  cleanup_free char *doc = process_document (o, &x->ctr, err);
  if (doc == NULL || oci_config_parse (doc, strlen (doc), &x->proc, err) < 0)
    return csr_error_wrap (err, "%s", o->process ? o->process : "the process");
  if (!x->proc.has_process)
    return csr_error_set (err, EINVAL, "no process to run");
  cleanup_free char *cache = NULL;
  if (asprintf (&cache, "%s/@cache", root) < 0)
    cache = NULL;
  if (x->ctr.seccomp_json
      && csr_seccomp_compile_oci_cached (x->ctr.seccomp_json, strlen (x->ctr.seccomp_json), cache,
                                         &x->seccomp, err)
             < 0)
    return csr_error_wrap (err, "linux.seccomp");
  if (x->proc.terminal)
    {
      if (o->console_socket == NULL)
        return csr_error_set (err, EINVAL, "a terminal needs --console-socket");
      x->console = oci_connect_console (o->console_socket, err);
      if (x->console < 0)
        return -1;
    }
  if (o->pid_file)
    {
      x->pid_file = open (o->pid_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (x->pid_file < 0)
        return csr_error_errno (err, "pid file %s", o->pid_file);
    }
  (void)g;
  if (x->st.cgroup_v2 && open_procs (x, x->st.cgroup_v2, err) < 0)
    return -1;
  for (size_t i = 0; i < x->st.n_cgroup_v1; i++)
    if (open_procs (x, x->st.cgroup_v1[i], err) < 0)
      return -1;
  if (open_namespaces (x->st.pid, x->ns, err) < 0)
    return -1;
  /* A container without a mount namespace of its own runs chrooted into
   * its rootfs (csrun-oci(8)): the process exec'd into it too. */
  if (x->ns[N_NS - 1] < 0)
    {
      char path[64];
      snprintf (path, sizeof path, "/proc/%d/root", (int)x->st.pid);
      x->root = open (path, O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (x->root < 0)
        return csr_error_errno (err, "open %s", path);
    }
  return 0;
}

/* In the container's namespaces: fork the process, put it in the
 * container's cgroup, let it run, and (unless detached) wait for it. */
static int
spawn (const struct csr_global *g, const struct exec_opts *o, struct exec_ctx *x)
{
  csr_error *e = NULL;
  /* Join the container's namespaces; the pid namespace takes effect in the
   * child forked below, which is the new process. */
  for (size_t i = 0; i < N_NS; i++)
    if (x->ns[i] >= 0 && setns (x->ns[i], ns_kinds[i].flag) < 0)
      {
        csr_error_errno (&e, "join the container's %s namespace", ns_kinds[i].name);
        return oci_fail (g, e);
      }
  int go[2], stp[2];
  if (pipe2 (go, O_CLOEXEC) < 0 || pipe2 (stp, O_CLOEXEC) < 0)
    {
      return oci_failf (g, "pipe: %s", strerror (errno));
    }
  /* The child's end of the status pipe above the fds --preserve-fds keeps
   * (their close-on-exec flag is cleared). */
  int st_w = fcntl (stp[1], F_DUPFD_CLOEXEC, 3 + (int)o->preserve_fds + 8);
  if (st_w < 0)
    return oci_failf (g, "dup: %s", strerror (errno));
  close (stp[1]);
  pid_t pid = fork ();
  if (pid < 0)
    {
      return oci_failf (g, "fork: %s", strerror (errno));
    }
  if (pid == 0)
    {
      close (go[1]);
      close (stp[0]);
      char c;
      if (read (go[0], &c, 1) != 1)
        _exit (125);
      close (go[0]);
      if (x->root >= 0 && (fchdir (x->root) < 0 || chroot (".") < 0))
        {
          fprintf (stderr, "csrun: chroot into the container's root: %s\n", strerror (errno));
          unsigned char code = 125;
          if (write (st_w, &code, 1) != 1)
            fprintf (stderr, "csrun: report the failure: %s\n", strerror (errno));
          _exit (code);
        }
      char exe[PATH_MAX];
      if (csr_oci_prepare_process (&x->proc, x->seccomp ? &x->seccomp->prog : NULL, x->console,
                                   (int)o->preserve_fds, exe, sizeof exe, &e)
          < 0)
        {
          int st = e->status; /* csr_error_text folds it into the message */
          fprintf (stderr, "csrun: %s\n", csr_error_text (e));
          unsigned char code = st == ENOENT ? 127 : st == EACCES ? 126 : 125;
          if (write (st_w, &code, 1) != 1)
            fprintf (stderr, "csrun: report the failure: %s\n", strerror (errno));
          _exit (code);
        }
      csr_oci_exec_process (&x->proc, x->seccomp ? &x->seccomp->prog : NULL, exe, st_w);
    }
  close (st_w);
  close (go[0]);
  /* Into the container's cgroup before it runs anything (the files were
   * opened before we entered its mount namespace). */
  char pidtext[24];
  int pn = snprintf (pidtext, sizeof pidtext, "%d", (int)pid);
  for (size_t i = 0; i < x->n_procs; i++)
    if (write (x->procs[i], pidtext, (size_t)pn) != pn)
      oci_warn (g, "exec: move pid %d into the container's cgroup: %s", (int)pid, strerror (errno));
  if (x->pid_file >= 0)
    dprintf (x->pid_file, "%d", (int)pid);
  if (write (go[1], "g", 1) != 1)
    {
      kill (pid, SIGKILL);
      return oci_failf (g, "exec: the process did not start");
    }
  close (go[1]);
  if (o->detach)
    {
      /* Detached: exit 0 once the execve happened (end-of-file on the
       * close-on-exec pipe), else the child's exit code. */
      unsigned char code;
      ssize_t n;
      while ((n = read (stp[0], &code, 1)) < 0 && errno == EINTR)
        ;
      close (stp[0]);
      if (n == 1)
        while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
          ;
      return n == 1 ? code : 0;
    }
  /* (kept open until the child is gone: its failure byte must not SIGPIPE it) */
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return oci_failf (g, "wait: %s", strerror (errno));
  close (stp[0]);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}
int
cmd_oci_exec (struct csr_global *g, int argc, char **argv)
{
  struct exec_opts o = { 0 };
  static const char doc[] = "Run a process in a running container.\vSee csrun-oci(8).";
  struct argp argp = { exec_options, parse_exec, "ID [COMMAND [ARG...]]", doc, NULL, NULL, NULL };
  argp_err_exit_status = 1;
  argp_parse (&argp, argc, argv, ARGP_IN_ORDER, NULL, &o);
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct exec_ctx x;
  memset (&x, 0, sizeof x);
  x.console = x.pid_file = x.root = -1;
  for (size_t i = 0; i < N_NS; i++)
    x.ns[i] = -1;
  csr_error *e = NULL;
  if (prepare (g, &o, root, &x, &e) < 0)
    {
      exec_ctx_release (&x);
      return oci_fail (g, e);
    }
  /* From here on csrun is in the container's namespaces: it leaves with
   * _exit, without the at-exit machinery (a sanitizer's leak checker would
   * start its tracer in the container's pid namespace). */
  int rc = spawn (g, &o, &x);
  exec_ctx_release (&x);
  fflush (NULL);
  _exit (rc);
}
