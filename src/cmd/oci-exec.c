/* csrun exec: run another process in a running container: its namespaces,
 * its cgroup, its seccomp profile; the process from --process (a
 * runtime-spec "process" object) or from the command line. */
#include "config.h"
#include "oci.h"

#include <argp.h>
#include <ctype.h>
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

#include <sys/capability.h>
#include <yajl/yajl_gen.h>

#include "jail/enter.h"
#include "jail/launch.h"
#include "jail/oci-child.h"
#include "jail/seccomp-notify.h"
#include "jail/seccomp.h"
#include "cgroup/cgroup.h"
#include "cgroup/subcgroup.h"
#include "oci/console.h"
#include "oci/validate.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/parse.h"

/* runc's exit status for an exec that failed in the runtime (no such
 * container, a paused one, a program that could not be started, ...): the
 * process's own statuses are 0-254 (and 128+N for signals). */
#define EXEC_RUNTIME_ERROR 255

struct exec_opts
{
  const char *process;
  const char *pid_file;
  const char *console_socket;
  const char *cwd;
  const char *user;
  const char *env[64];
  size_t n_env;
  const char *caps[64]; /* --cap: added to every set of the container's process */
  size_t n_caps;
  uint32_t gids[64]; /* --additional-gids */
  size_t n_gids;
  const char *cgroups[16]; /* --cgroup [CONTROLLER[,CONTROLLER]:]PATH */
  size_t n_cgroups;
  const char *apparmor, *process_label;
  int no_new_privs; /* -1: the container's setting */
  bool ignore_paused;
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
  OPT_NO_NEW_PRIVS,
  OPT_APPARMOR,
  OPT_PROCESS_LABEL,
  OPT_CGROUP,
  OPT_IGNORE_PAUSED,
};

static struct argp_option exec_options[] = {
  { "process", OPT_PROCESS, "FILE", 0, "The process to run: a runtime-spec process object", 0 },
  { "pid-file", OPT_PID_FILE, "FILE", 0, "Write the new process's host pid to FILE", 0 },
  { "console-socket", OPT_CONSOLE_SOCKET, "SOCKET", 0,
    "Send the pseudo-terminal's master here (with --tty)", 0 },
  { "tty", 't', NULL, 0,
    "Give the process a terminal (without --console-socket: copied to csrun's own stdio)", 0 },
  { "detach", 'd', NULL, 0, "Return once the process runs", 0 },
  { "preserve-fds", OPT_PRESERVE_FDS, "N", 0, "Pass N more descriptors (3 ..)", 0 },
  { "cwd", OPT_CWD, "DIR", 0, "Working directory (without --process)", 0 },
  { "env", 'e', "KEY=VALUE", 0, "Environment variable (without --process); repeatable", 0 },
  { "user", 'u', "UID[:GID]", 0, "User (without --process; GID defaults to the container's)", 0 },
  { "additional-gids", 'g', "GID", 0, "Another supplementary group (without --process); repeatable",
    0 },
  { "cap", 'c', "CAP", 0,
    "Add a capability to the container's sets (without --process); repeatable", 0 },
  { "no-new-privs", OPT_NO_NEW_PRIVS, NULL, 0,
    "Set no_new_privs (without --process; default: the container's setting)", 0 },
  { "apparmor", OPT_APPARMOR, "PROFILE", 0,
    "process.apparmorProfile (without --process; recorded, not applied; refused where "
    "AppArmor is off)",
    0 },
  { "process-label", OPT_PROCESS_LABEL, "LABEL", 0,
    "process.selinuxLabel (without --process; recorded, not applied)", 0 },
  { "cgroup", OPT_CGROUP, "[CTRL[,CTRL]:]PATH", 0,
    "Run in this sub-cgroup of the container's (v1: of those controllers); repeatable", 0 },
  { "ignore-paused", OPT_IGNORE_PAUSED, NULL, 0,
    "Exec even into a paused container (the process starts frozen)", 0 },
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
    case 'e':
      if (o->n_env == sizeof o->env / sizeof o->env[0])
        argp_failure (state, 1, 0, "too many --env options");
      o->env[o->n_env++] = arg;
      break;
    case 'u':
      o->user = arg;
      break;
    case 'c':
      if (o->n_caps == sizeof o->caps / sizeof o->caps[0])
        argp_failure (state, 1, 0, "too many --cap options");
      o->caps[o->n_caps++] = arg;
      break;
    case 'g':
      {
        uint64_t gid;
        if (o->n_gids == sizeof o->gids / sizeof o->gids[0])
          argp_failure (state, 1, 0, "too many --additional-gids options");
        else if (csr_parse_uint (arg, 0, UINT32_MAX - 1, &gid, &e) < 0)
          {
            argp_failure (state, 1, 0, "invalid --additional-gids '%s': %s", arg, e->msg);
            csr_error_free (e);
          }
        else
          o->gids[o->n_gids++] = (uint32_t)gid;
      }
      break;
    case OPT_NO_NEW_PRIVS:
      o->no_new_privs = 1;
      break;
    case OPT_APPARMOR:
      o->apparmor = arg;
      break;
    case OPT_PROCESS_LABEL:
      o->process_label = arg;
      break;
    case OPT_CGROUP:
      if (o->n_cgroups == sizeof o->cgroups / sizeof o->cgroups[0])
        argp_failure (state, 1, 0, "too many --cgroup options");
      o->cgroups[o->n_cgroups++] = arg;
      break;
    case OPT_IGNORE_PAUSED:
      o->ignore_paused = true;
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

/* --process FILE: any readable file, also a pipe or a FIFO (/dev/fd/N, as
 * runc and crun read it), never a directory. */
static int
read_process_file (const char *path, char **text, size_t *len, csr_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return csr_error_errno (err, "read '%s'", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "read '%s': fstat", path);
  if (S_ISDIR (st.st_mode))
    return csr_error_set (err, EISDIR, "read '%s'", path);
  if (csr_read_fd (fd, 4 << 20, text, len, err) < 0)
    return csr_error_wrap (err, "'%s'", path);
  return 0;
}

/* -u UID[:GID]: numbers, as runc takes them; GID stays the container's
 * when only UID is given. */
static int
parse_user (const char *user, unsigned long *uid, unsigned long *gid, csr_error **err)
{
  cleanup_free char *copy = strdup (user);
  if (copy == NULL)
    return csr_error_errno (err, "--user");
  char *colon = strchr (copy, ':');
  if (colon)
    *colon = '\0';
  uint64_t n;
  if (csr_parse_uint (copy, 0, UINT32_MAX - 1, &n, err) < 0)
    return csr_error_wrap (err, "--user '%s': the uid must be a number", user);
  *uid = (unsigned long)n;
  if (colon)
    {
      if (csr_parse_uint (colon + 1, 0, UINT32_MAX - 1, &n, err) < 0)
        return csr_error_wrap (err, "--user '%s': the gid must be a number", user);
      *gid = (unsigned long)n;
    }
  return 0;
}

/* A capability name this system knows ("CAP_KILL"); crun ignores others
 * (with a warning), and so does exec --cap. */
static bool
known_cap (const char *name)
{
  cap_value_t v;
  if (strncmp (name, "CAP_", 4) == 0 && name[4] != '\0' && strspn (name + 4, "0123456789") == 0
      && cap_from_name (name, &v) == 0)
    return true;
  csr_warn ("exec: --cap %s: unknown capability, ignored", name);
  return false;
}

/* A config document around the process: from --process as it is, else (as
 * runc does) the container's own process with the command line's changes:
 * args, cwd, env added, user, supplementary groups added, capabilities
 * added (--cap), terminal, no_new_privs, AppArmor profile, SELinux label.  What the
 * document does not carry (the container's capabilities, rlimits,
 * oomScoreAdj, umask) inherit_process adds after parsing. */
static char *
process_document (const struct exec_opts *o, const struct oci_config *ctr, csr_error **err)
{
  if (o->process)
    {
      cleanup_free char *text = NULL;
      size_t len = 0;
      if (read_process_file (o->process, &text, &len, err) < 0)
        return NULL;
      char *doc = NULL;
      if (asprintf (&doc, "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"process\":%s}",
                    text)
          < 0)
        csr_error_set (err, ENOMEM, "process document");
      return doc;
    }
  unsigned long uid = ctr->uid, gid = ctr->gid;
  if (o->user && parse_user (o->user, &uid, &gid, err) < 0)
    return NULL;
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
  STR ("uid");
  yajl_gen_integer (y, (long long)uid);
  STR ("gid");
  yajl_gen_integer (y, (long long)gid);
  STR ("additionalGids");
  yajl_gen_array_open (y);
  for (size_t i = 0; i < ctr->n_additional_gids; i++)
    yajl_gen_integer (y, (long long)ctr->additional_gids[i]);
  for (size_t i = 0; i < o->n_gids; i++)
    yajl_gen_integer (y, (long long)o->gids[i]);
  yajl_gen_array_close (y);
  yajl_gen_map_close (y);
  if (o->n_caps > 0)
    {
      /* Parsed (and checked) here, ORed into the container's sets later.
       * Bounding, effective and permitted, as crun does (runc adds them to
       * the ambient set too, where without the inheritable one they have no
       * effect). */
      static const char *const sets[] = { "bounding", "effective", "permitted" };
      STR ("capabilities");
      yajl_gen_map_open (y);
      for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++)
        {
          STR (sets[k]);
          yajl_gen_array_open (y);
          for (size_t i = 0; i < o->n_caps; i++)
            if (known_cap (o->caps[i]))
              STR (o->caps[i]);
          yajl_gen_array_close (y);
        }
      yajl_gen_map_close (y);
    }
  STR ("noNewPrivileges");
  yajl_gen_bool (y, o->no_new_privs > 0 || ctr->no_new_privileges);
  const char *aa = o->apparmor ? o->apparmor : ctr->apparmor_profile;
  const char *label = o->process_label ? o->process_label : ctr->selinux_label;
  if (aa)
    {
      STR ("apparmorProfile");
      STR (aa);
    }
  if (label)
    {
      STR ("selinuxLabel");
      STR (label);
    }
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

/* The rest of the container's process for an exec without --process (runc
 * starts from the container's process object): its capabilities (with
 * --cap's added), rlimits, oomScoreAdj and umask. */
static int
inherit_process (struct oci_config *p, const struct oci_config *ctr, csr_error **err)
{
  if (ctr->has_caps)
    {
      const struct oci_caps *c = &ctr->caps;
      p->caps.bounding |= c->bounding;
      p->caps.effective |= c->effective;
      p->caps.inheritable |= c->inheritable;
      p->caps.permitted |= c->permitted;
      p->caps.ambient |= c->ambient;
      p->has_caps = true;
    }
  if (ctr->n_rlimits > 0 && p->n_rlimits == 0)
    {
      p->rlimits = calloc (ctr->n_rlimits, sizeof *p->rlimits);
      if (p->rlimits == NULL)
        return csr_error_errno (err, "the container's rlimits");
      memcpy (p->rlimits, ctr->rlimits, ctr->n_rlimits * sizeof *p->rlimits);
      p->n_rlimits = ctr->n_rlimits;
    }
  if (ctr->has_oom_score_adj && !p->has_oom_score_adj)
    {
      p->has_oom_score_adj = true;
      p->oom_score_adj = ctr->oom_score_adj;
    }
  if (ctr->has_umask && !p->has_umask)
    {
      p->has_umask = true;
      p->umask = ctr->umask;
    }
  return 0;
}

struct exec_ctx
{
  struct oci_state st;
  struct oci_config ctr;
  struct oci_config proc;
  struct csr_seccomp *seccomp;
  struct csr_enter enter;                  /* the container's namespaces (and root) */
  char *listener_path, *listener_metadata; /* linux.seccomp.listenerPath, or NULL */
  int listener[2];                         /* ours, the child's: its seccomp listener */
  int agent;                               /* connected to listenerPath (before setns) */
  char *agent_state;                       /* the container's state for the agent */
  int console;                             /* what the child sends the terminal over */
  int console_ours; /* the other end, when we copy the terminal to our stdio */
  int pid_file;
  int procs[CSR_CG_MAX_DIRS + 1]; /* cgroup.procs of the container's cgroup dirs */
  size_t n_procs;
};

static void
exec_ctx_release (struct exec_ctx *x)
{
  oci_state_release (&x->st);
  oci_config_release (&x->ctr);
  oci_config_release (&x->proc);
  csr_seccomp_free (x->seccomp);
  csr_enter_release (&x->enter);
  if (x->console >= 0)
    close (x->console);
  if (x->console_ours >= 0)
    close (x->console_ours);
  for (int i = 0; i < 2; i++)
    if (x->listener[i] >= 0)
      close (x->listener[i]);
  if (x->agent >= 0)
    close (x->agent);
  free (x->agent_state);
  free (x->listener_path);
  free (x->listener_metadata);
  if (x->pid_file >= 0)
    close (x->pid_file);
  for (size_t i = 0; i < x->n_procs; i++)
    close (x->procs[i]);
}

/* The cgroup.procs files the process joins: the container's cgroup
 * directories, or with --cgroup sub-cgroups of them (cgroup/subcgroup.h). */
static int
open_cgroups (const struct exec_opts *o, struct exec_ctx *x, csr_error **err)
{
  return csr_cgroup_exec_open (x->st.cgroup_v2, x->st.cgroup_v1, x->st.n_cgroup_v1, o->cgroups,
                               o->n_cgroups, x->procs, sizeof x->procs / sizeof x->procs[0],
                               &x->n_procs, err);
}

/* Everything read from the host before we enter the container. */
static int
prepare (const struct csr_global *g, const struct exec_opts *o, const char *root,
         struct exec_ctx *x, csr_error **err)
{
  if (oci_id_check (o->id, err) < 0 || oci_state_load (root, o->id, &x->st, err) < 0)
    return -1;
  enum oci_status s = oci_state_status (&x->st);
  /* runc's rule: a paused container only with --ignore-paused (the
   * process joins the frozen cgroup and starts when it is resumed). */
  if (s == OCI_PAUSED && !o->ignore_paused)
    return csr_error_set (err, 0,
                          "cannot exec in a paused container (use --ignore-paused to override)");
  if (s != OCI_RUNNING && s != OCI_CREATED && s != OCI_PAUSED)
    return csr_error_set (err, 0, "cannot exec in container '%s': it is %s", o->id,
                          oci_status_name (s));
  if (x->st.config_path == NULL || oci_config_load (x->st.config_path, &x->ctr, err) < 0)
    return csr_error_wrap (err, "the container's config");
  cleanup_free char *doc = process_document (o, &x->ctr, err);
  if (doc == NULL || oci_config_parse (doc, strlen (doc), &x->proc, err) < 0)
    return csr_error_wrap (err, "%s", o->process ? o->process : "the process");
  if (!x->proc.has_process)
    return csr_error_set (err, EINVAL, "no process to run");
  /* A profile for the new process (--apparmor, or the --process file's) is
   * refused where AppArmor is off, as create refuses the container's. */
  if (oci_apparmor_check (x->proc.apparmor_profile, OCI_APPARMOR_ENABLED, err) < 0)
    return csr_error_wrap (err, "%s", o->apparmor ? "exec --apparmor" : "exec");
  if (o->process == NULL && inherit_process (&x->proc, &x->ctr, err) < 0)
    return -1;
  cleanup_free char *cache = NULL;
  if (asprintf (&cache, "%s/@cache", root) < 0)
    cache = NULL;
  if (x->ctr.seccomp_json
      && csr_seccomp_compile_oci_cached (x->ctr.seccomp_json, strlen (x->ctr.seccomp_json), cache,
                                         &x->seccomp, err)
             < 0)
    return csr_error_wrap (err, "linux.seccomp");
  if (x->seccomp
      && csr_seccomp_listener_config (x->ctr.seccomp_json, strlen (x->ctr.seccomp_json),
                                      &x->listener_path, &x->listener_metadata, err)
             < 0)
    return -1;
  if (x->listener_path && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, x->listener) < 0)
    return csr_error_errno (err, "socketpair");
  if (x->proc.terminal)
    {
      /* As runc: without --console-socket, a foreground exec copies
       * between the terminal and our own stdio. */
      if (o->console_socket == NULL && o->detach)
        return csr_error_set (err, 0, "exec -d with a terminal needs --console-socket");
      if (o->console_socket == NULL)
        {
          if (oci_console_pair (&x->console_ours, &x->console, err) < 0)
            return -1;
        }
      else if ((x->console = oci_connect_console (o->console_socket, err)) < 0)
        return -1;
    }
  if (o->pid_file)
    {
      x->pid_file = open (o->pid_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (x->pid_file < 0)
        return csr_error_errno (err, "pid file %s", o->pid_file);
    }
  (void)g;
  if (open_cgroups (o, x, err) < 0)
    return -1;
  if (csr_enter_open (&x->enter, x->st.pid, err) < 0)
    return -1;
  /* listenerPath is a host path, and the state is read from the host's
   * /proc: both before we enter the container (the last step here, so an
   * agent sees no connection for an exec that failed earlier). */
  if (x->listener_path && (x->agent_state = oci_state_json (&x->st)) == NULL)
    return csr_error_set (err, ENOMEM, "the container's state");
  if (x->listener_path && (x->agent = csr_seccomp_agent_connect (x->listener_path, err)) < 0)
    return -1;
  return 0;
}

/* The seccomp listener of the new process to the agent at listenerPath
 * (with the container's state); nothing when the child failed first. */
static int
pass_listener (const struct csr_global *g, struct exec_ctx *x, pid_t pid)
{
  csr_error *e = NULL;
  struct csr_sync_msg m;
  int fd = -1;
  ssize_t n = csr_seccomp_recv_fd (x->listener[0], &m, sizeof m, &fd, &e);
  cleanup_close int listener = fd;
  if (n <= 0 || listener < 0)
    {
      csr_error_free (e);
      return 0; /* it failed before it loaded the filter, and says why */
    }
  if (csr_seccomp_agent_send (x->agent, listener, pid, x->listener_metadata, x->agent_state, &e)
      == 0)
    return 0;
  oci_fail (g, e);
  return -1;
}

/* In the container's namespaces: fork the process, put it in the
 * container's cgroup, let it run, and (unless detached) wait for it. */
static int
spawn (const struct csr_global *g, const struct exec_opts *o, struct exec_ctx *x)
{
  csr_error *e = NULL;
  /* Join the container's namespaces; the pid namespace takes effect in the
   * child forked below, which is the new process. */
  if (csr_enter_join (&x->enter, &e) < 0)
    return oci_fail (g, e), EXEC_RUNTIME_ERROR;
  const struct csr_enter_process proc = {
    .proc = &x->proc,
    .seccomp_bpf = x->seccomp ? &x->seccomp->prog : NULL,
    .listener_sock = x->listener[1],
    .console = x->console,
    .preserve_fds = (int)o->preserve_fds,
  };
  int go[2] = { -1, -1 }, stp[2] = { -1, -1 };
  pid_t pid = csr_enter_spawn (&x->enter, &proc, &go[1], &stp[0], &e);
  if (pid < 0)
    return oci_fail (g, e), EXEC_RUNTIME_ERROR;
  if (x->console >= 0)
    {
      /* the child's copy is the one it sends over: EOF if it dies first */
      close (x->console);
      x->console = -1;
    }
  if (x->listener[1] >= 0)
    {
      close (x->listener[1]);
      x->listener[1] = -1;
    }
  /* Into the container's cgroup before it runs anything (the files were
   * opened before we entered its mount namespace). */
  csr_error *cge = NULL;
  if (csr_cgroup_exec_join (x->procs, x->n_procs, pid, &cge) < 0)
    {
      oci_warn (g, "exec: %s", csr_error_text (cge));
      csr_error_free (cge);
    }
  char pidtext[24];
  int pn = snprintf (pidtext, sizeof pidtext, "%d", (int)pid);
  csr_debug ("exec: process %d in %zu cgroup director%s", (int)pid, x->n_procs,
             x->n_procs == 1 ? "y" : "ies");
  if (x->pid_file >= 0)
    {
      bool written = write (x->pid_file, pidtext, (size_t)pn) == pn;
      int saved = errno;
      int closed = close (x->pid_file);
      if (written)
        saved = errno;
      x->pid_file = -1;
      if (!written || closed < 0)
        {
          kill (pid, SIGKILL);
          while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
            ;
          return oci_failf (g, "exec: write the pid file %s: %s", o->pid_file, strerror (saved)),
                 EXEC_RUNTIME_ERROR;
        }
    }
  if (write (go[1], "g", 1) != 1)
    {
      kill (pid, SIGKILL);
      return oci_failf (g, "exec: the process did not start"), EXEC_RUNTIME_ERROR;
    }
  close (go[1]);
  if (x->listener[0] >= 0 && pass_listener (g, x, pid) < 0)
    {
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      return EXEC_RUNTIME_ERROR;
    }
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
      return n == 1 ? EXEC_RUNTIME_ERROR : 0;
    }
  if (x->console_ours >= 0)
    {
      csr_error *te = NULL;
      cleanup_close int master = oci_console_recv (x->console_ours, &te);
      if (master >= 0)
        {
          if (oci_console_proxy (master, STDIN_FILENO, STDOUT_FILENO, pid, &te) < 0)
            oci_warn (g, "exec: %s", csr_error_text (te));
        }
      csr_error_free (te); /* no terminal: the child failed, and says why */
    }
  /* (kept open until the child is gone: its failure byte must not SIGPIPE it) */
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return oci_failf (g, "wait: %s", strerror (errno)), EXEC_RUNTIME_ERROR;
  /* A byte: the process failed before its execve (the message is on
   * stderr); end-of-file: it ran, and its status is the answer. */
  unsigned char code;
  ssize_t n;
  while ((n = read (stp[0], &code, 1)) < 0 && errno == EINTR)
    ;
  close (stp[0]);
  if (n == 1)
    return EXEC_RUNTIME_ERROR;
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
    return EXEC_RUNTIME_ERROR;
  struct exec_ctx x;
  memset (&x, 0, sizeof x);
  x.console = x.console_ours = x.pid_file = -1;
  x.listener[0] = x.listener[1] = x.agent = -1;
  csr_enter_init (&x.enter);
  csr_error *e = NULL;
  if (prepare (g, &o, root, &x, &e) < 0)
    {
      exec_ctx_release (&x);
      oci_fail (g, e);
      return EXEC_RUNTIME_ERROR;
    }
  /* From here on csrun is in the container's namespaces: it leaves with
   * _exit, without the at-exit machinery (a sanitizer's leak checker would
   * start its tracer in the container's pid namespace). */
  int rc = spawn (g, &o, &x);
  exec_ctx_release (&x);
  fflush (NULL);
  _exit (rc);
}
