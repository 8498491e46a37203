/* csrun create / csrun run (a bundle): make the container and leave it
 * waiting for `csrun start`; run also starts it and waits for it. */
#include "config.h"
#include "oci.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/oci-jail.h"
#include "jail/seccomp.h"
#include "jail/spec.h"
#include "cgroup/cgroup.h"
#include "oci/resources.h"
#include "oci/console.h"
#include "oci/devices.h"
#include "oci/hooks.h"
#include "oci/notify.h"
#include "oci/validate.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/parse.h"

struct create_opts
{
  const char *bundle;
  const char *config;
  const char *pid_file;
  const char *console_socket;
  uint64_t preserve_fds;
  bool no_pivot;
  bool detach;
  bool keep;
  bool run;
  const char *id;
};

enum
{
  OPT_PID_FILE = 1000,
  OPT_CONSOLE_SOCKET,
  OPT_PRESERVE_FDS,
  OPT_NO_PIVOT,
  OPT_NO_NEW_KEYRING,
  OPT_NO_SUBREAPER,
  OPT_KEEP,
};

static struct argp_option create_options[] = {
  { "bundle", 'b', "DIR", 0, "The bundle: config.json and the rootfs (default: .)", 0 },
  { "config", 'f', "FILE", 0, "config.json to use instead of BUNDLE/config.json", 0 },
  { "pid-file", OPT_PID_FILE, "FILE", 0, "Write the container's host pid to FILE", 0 },
  { "console-socket", OPT_CONSOLE_SOCKET, "SOCKET", 0,
    "Send the pseudo-terminal's master to this AF_UNIX socket (process.terminal)", 0 },
  { "preserve-fds", OPT_PRESERVE_FDS, "N", 0,
    "Pass N more descriptors (3 .. 3+N-1) to the container's process", 0 },
  { "no-pivot", OPT_NO_PIVOT, NULL, 0, "Move the rootfs to / and chroot instead of pivot_root", 0 },
  { "no-new-keyring", OPT_NO_NEW_KEYRING, NULL, 0, "Accepted (csrun makes no session keyring)", 0 },
  { "detach", 'd', NULL, 0, "run: start the container and return at once", 0 },
  { "no-subreaper", OPT_NO_SUBREAPER, NULL, 0, "run: accepted for runc compatibility", 0 },
  { "keep", OPT_KEEP, NULL, 0, "run: keep the stopped container (delete it later)", 0 },
  { "help", 'h', NULL, 0, "Show this help", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_create (int key, char *arg, struct argp_state *state)
{
  struct create_opts *o = state->input;
  csr_error *e = NULL;
  switch (key)
    {
    case 'b':
      o->bundle = arg;
      break;
    case 'f':
      o->config = arg;
      break;
    case OPT_PID_FILE:
      o->pid_file = arg;
      break;
    case OPT_CONSOLE_SOCKET:
      o->console_socket = arg;
      break;
    case OPT_PRESERVE_FDS:
      if (csr_parse_uint (arg, 0, 4096, &o->preserve_fds, &e) < 0)
        {
          argp_failure (state, 1, 0, "invalid --preserve-fds: %s", e->msg);
          csr_error_free (e);
        }
      break;
    case OPT_NO_PIVOT:
      o->no_pivot = true;
      break;
    case OPT_NO_NEW_KEYRING:
    case OPT_NO_SUBREAPER:
      break;
    case 'd':
      o->detach = true;
      break;
    case OPT_KEEP:
      o->keep = true;
      break;
    case 'h':
      exit (oci_help (o->run ? "run" : "create", stdout) < 0 ? 1 : 0);
    case ARGP_KEY_ARG:
      if (o->id)
        argp_failure (state, 1, 0, "unexpected argument '%s'", arg);
      o->id = arg;
      break;
    case ARGP_KEY_END:
      if (o->id == NULL)
        argp_failure (state, 1, 0, "missing container ID");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

struct creation
{
  const struct csr_global *g;
  const char *root;
  struct oci_state st;
  struct oci_config cfg;
  struct csr_seccomp *seccomp;
  struct csr_cgroup *cg; /* or NULL: no cgroup */
  bool dir_made;
  bool foreground;  /* run without -d: a terminal may use our own stdio */
  int console_ours; /* then our end of the console socket pair, else -1 */
};

/* linux.resources.devices can't be enforced here: say so (the reasons are
 * in csrun-oci(8), "Devices"). */
static void
warn_devices (struct creation *c, bool rootless)
{
  if (c->cfg.resources.n_devices == 0)
    return;
  if (rootless)
    oci_warn (c->g, "linux.resources.devices not enforced (rootless: no device cgroup): the "
                    "container reaches only the device nodes csrun puts in /dev and the "
                    "config's bind mounts, with their host permissions");
  else
    oci_warn (c->g, "linux.resources.devices not enforced (--cgroup-manager=disabled: no cgroup)");
}

/* The container's cgroup at linux.cgroupsPath with linux.resources; what
 * can't be applied here is a warning (podman runs rootless containers
 * without cgroups on v1 hosts, and so do runc and crun).  The device rules
 * are the exception: as root they are enforced or the container is refused;
 * rootless there is no device cgroup (nor can the container make a node:
 * mknod is refused in its user namespace), which is reported. */
static int
make_cgroup (struct creation *c, const char *id, csr_error **err)
{
  bool devices = oci_devices_privileged ();
  if (c->g->cgroup_manager && strcmp (c->g->cgroup_manager, "disabled") == 0)
    {
      warn_devices (c, !devices);
      return 0;
    }
  if (!devices)
    warn_devices (c, true);
  const struct oci_config *k = &c->cfg;
  bool systemd = c->g->systemd_cgroup;
  /* runc refuses --systemd-cgroup without systemd; csrun makes the same
   * cgroup directly (the path systemd would have used), and says so. */
  struct stat sd;
  if (systemd && stat ("/run/systemd/system", &sd) < 0)
    oci_warn (c->g, "--systemd-cgroup: systemd is not running here: managing the cgroup "
                    "directly (cgroupfs) at the path systemd would use");
  cleanup_free char *path = NULL;
  if (csr_cgroup_container_path (k->cgroups_path, id, systemd, &path, err) < 0)
    return -1;
  struct csr_cgroup_resources r = { 0 };
  if (k->resources.json
      && oci_cgroup_resources_parse (k->resources.json, strlen (k->resources.json), &r, err) < 0)
    return -1;
  r.set_devices = devices;
  r.devices = k->resources.devices;
  r.n_devices = k->resources.n_devices;
  struct csr_cgroup_applied ap = { 0 };
  int rc = csr_cgroup_container_create (path, &r, NULL, NULL, &c->cg, &ap, err);
  bool any = oci_cgroup_resources_any (&r);
  bool want_mem = r.memory_limit > 0, want_pids = r.pids_limit > 0, want_cpu = r.cpu_quota > 0;
  oci_cgroup_resources_release (&r);
  if (rc < 0)
    return -1;
  if (devices && !ap.devices)
    return csr_error_set (err, ENOTSUP,
                          "linux.resources.devices: %s: the device rules can't be enforced, "
                          "refusing to run the container without them",
                          rc == 0 ? "no writable cgroup hierarchy here"
                                  : "no devices controller in the container's cgroup");
  if (rc == 0)
    {
      if (any)
        oci_warn (c->g, "no writable cgroup here: linux.resources not applied");
      return 0;
    }
  if (want_mem && !ap.memory)
    oci_warn (c->g, "linux.resources.memory.limit not applied (no memory controller)");
  if (want_pids && !ap.pids)
    oci_warn (c->g, "linux.resources.pids.limit not applied (no pids controller)");
  if (want_cpu && !ap.cpu)
    oci_warn (c->g, "linux.resources.cpu.quota not applied (no cpu controller)");
  const char *v2 = csr_cgroup_v2_path (c->cg);
  const char *const *v1;
  size_t n_v1 = csr_cgroup_v1_paths (c->cg, &v1);
  c->st.cgroup_v2 = v2 ? strdup (v2) : NULL;
  for (size_t i = 0; i < n_v1 && i + 1 < sizeof c->st.cgroup_v1 / sizeof (char *); i++)
    {
      c->st.cgroup_v1[i] = strdup (v1[i]);
      c->st.n_cgroup_v1 = i + 1;
    }
  return oci_state_save (c->root, &c->st, err);
}

static char *
state_for_hooks (pid_t pid, bool creating, void *data)
{
  struct creation *c = data;
  c->st.pid = pid;
  c->st.pid_start = oci_pid_start_time (pid, NULL);
  if (creating)
    {
      /* The seccomp agent's copy: "creating" (crun's test checks it). */
      bool was = c->st.creating;
      c->st.creating = true;
      char *json = oci_state_json (&c->st);
      c->st.creating = was;
      return json;
    }
  /* "created" for prestart, createRuntime, createContainer and
   * startContainer, as crun says (runtime-tools checks prestart's); the
   * state file says "creating" meanwhile (it has no pid yet). */
  return oci_state_json (&c->st);
}

/* prestart and createRuntime, when the container has its namespaces and
 * waits (csr_oci_jail_create calls this): in the runtime's namespaces, with
 * the bundle as their working directory. */
static int
runtime_hooks (pid_t pid, void *data, csr_error **err)
{
  struct creation *c = data;
  cleanup_free char *st = state_for_hooks (pid, false, c);
  if (st == NULL)
    return csr_error_set (err, ENOMEM, "the state for the hooks");
  cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (c->st.bundle && chdir (c->st.bundle) < 0)
    return csr_error_errno (err, "chdir %s", c->st.bundle);
  int rc = oci_hooks_run (&c->cfg, OCI_HOOK_PRESTART, st, err);
  if (rc == 0)
    rc = oci_hooks_run (&c->cfg, OCI_HOOK_CREATE_RUNTIME, st, err);
  if (cwd >= 0)
    (void)!fchdir (cwd);
  return rc;
}

static int
write_pid_file (const char *path, pid_t pid, csr_error **err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int)pid);
  return csr_write_file_atomic (path, buf, (size_t)n, 0644, err);
}

static char *
absolute (const char *path, csr_error **err)
{
  char *r = realpath (path, NULL);
  if (r == NULL)
    csr_error_errno (err, "%s", path);
  return r;
}

/* Copy the config at CFGP to DIR/config.json; *OUT is the copy's path. */
static int
snapshot_config (const char *cfgp, const char *dir, char **out, csr_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  /* 4 MiB: the bound oci_config_load already checked. */
  if (csr_read_file (cfgp, (size_t)4 << 20, &text, &len, err) < 0)
    return -1;
  cleanup_free char *path = NULL;
  if (asprintf (&path, "%s/config.json", dir) < 0)
    return csr_error_set (err, ENOMEM, "state paths");
  if (csr_write_file_atomic (path, text, len, 0600, err) < 0)
    return csr_error_wrap (err, "keep a copy of %s", cfgp);
  *out = steal_pointer (&path);
  return 0;
}

/* Without --console-socket, create and run -d have nowhere to put the
 * terminal's master; crun's wording ("use --console-socket"), which its
 * tests match. */
#define TERMINAL_NEEDS_SOCKET                                                                      \
  "process.terminal is true but no --console-socket was given: use --console-socket with "         \
  "create or run -d/--detach"

/* Everything up to a container waiting on its exec FIFO. */
/* The OCI face's spec of the container (its console socket into *CONSOLE). */
static int
fill_spec (struct creation *c, const struct create_opts *o, const char *bundle, const char *rootfs,
           int fifo_fd, struct csr_oci_spec *spec, int *console, csr_error **err)
{
  csr_oci_spec_init (spec);
  spec->jail.rootfs_dir = rootfs;
  spec->config = &c->cfg;
  spec->bundle = bundle;
  spec->exec_fifo = fifo_fd;
  spec->preserve_fds = (int)o->preserve_fds;
  /* Socket activation, as runc and crun do: LISTEN_FDS=N in our environment
   * (and LISTEN_PID, when set, ours) hands fds 3 .. 3+N-1 on too. */
  const char *listen = getenv ("LISTEN_FDS");
  const char *listen_pid = getenv ("LISTEN_PID");
  uint64_t n_listen = 0;
  if (listen && (listen_pid == NULL || atol (listen_pid) == (long)getpid ())
      && csr_parse_uint (listen, 0, 4096, &n_listen, NULL) == 0 && n_listen > 0)
    {
      spec->listen_fds = (int)n_listen;
      spec->preserve_fds += (int)n_listen;
    }
  spec->no_pivot = o->no_pivot;
  if (c->cfg.terminal)
    {
      /* Without --console-socket, runc's rule: `run` in the foreground
       * copies between the terminal and its own stdio; create and run -d
       * can't (nothing would be left to hold the master). */
      if (o->console_socket == NULL && !c->foreground)
        return csr_error_set (err, EINVAL, TERMINAL_NEEDS_SOCKET);
      if (o->console_socket == NULL)
        {
          if (oci_console_pair (&c->console_ours, console, err) < 0)
            return -1;
        }
      else if ((*console = oci_connect_console (o->console_socket, err)) < 0)
        return -1;
      spec->console = *console;
    }
  if (c->cfg.seccomp_json)
    {
      /* Compiled profiles are cached under the state root ('@' is in no id). */
      cleanup_free char *cache = NULL;
      if (asprintf (&cache, "%s/@cache", c->root) < 0)
        cache = NULL;
      if (csr_seccomp_compile_oci_cached (c->cfg.seccomp_json, strlen (c->cfg.seccomp_json), cache,
                                          &c->seccomp, err)
          < 0)
        return csr_error_wrap (err, "linux.seccomp");
      spec->jail.seccomp_bpf = &c->seccomp->prog;
    }
  return 0;
}

static int
create_container (struct creation *c, const struct create_opts *o, pid_t *pid, csr_error **err)
{
  const char *bundle_arg = o->bundle ? o->bundle : ".";
  cleanup_free char *bundle = absolute (bundle_arg, err);
  if (bundle == NULL)
    return -1;
  cleanup_free char *cfg_path = NULL;
  if (asprintf (&cfg_path, "%s/config.json", bundle) < 0)
    return csr_error_set (err, ENOMEM, "config path");
  const char *cfgp = o->config ? o->config : cfg_path;
  /* crun checks this first, whatever else is wrong in the config. */
  if (o->console_socket == NULL && !c->foreground && oci_config_peek_terminal (cfgp))
    return csr_error_set (err, EINVAL, TERMINAL_NEEDS_SOCKET);
  if (oci_config_load (cfgp, &c->cfg, err) < 0)
    return -1;
  if (!c->cfg.has_process)
    return csr_error_set (err, EINVAL, "%s: no process to run", cfgp);
  /* Before anything is made: what would change the host is refused here. */
  if (oci_config_validate (&c->cfg, err) < 0)
    return csr_error_wrap (err, "%s", cfgp);
  cleanup_free char *root_joined = NULL;
  if (c->cfg.root_path[0] != '/' && asprintf (&root_joined, "%s/%s", bundle, c->cfg.root_path) < 0)
    return csr_error_set (err, ENOMEM, "rootfs path");
  cleanup_free char *rootfs = absolute (root_joined ? root_joined : c->cfg.root_path, err);
  if (rootfs == NULL)
    return csr_error_wrap (err, "rootfs");

  if (oci_state_create_dir (c->root, o->id, err) < 0)
    return -1;
  c->dir_made = true;
  cleanup_free char *dir = oci_state_dir (c->root, o->id);
  cleanup_free char *fifo = NULL;
  if (dir == NULL || asprintf (&fifo, "%s/exec.fifo", dir) < 0)
    return csr_error_set (err, ENOMEM, "state paths");
  /* Writable by all: the process opens it after it became the config's user
   * (the state directory itself is the owner's alone). */
  if (mkfifo (fifo, 0622) < 0 || chmod (fifo, 0622) < 0)
    return csr_error_errno (err, "mkfifo %s", fifo);
  cleanup_close int fifo_fd = open (fifo, O_PATH | O_CLOEXEC);
  if (fifo_fd < 0)
    return csr_error_errno (err, "open %s", fifo);

  c->st.id = strdup (o->id);
  c->st.bundle = strdup (bundle);
  c->st.rootfs = strdup (rootfs);
  c->st.created = oci_now_rfc3339 ();
  c->st.owner = geteuid ();
  /* A copy of config.json in the state directory (the owner's, 0700) is
   * what start, exec and delete read later (hooks, the process defaults):
   * edits to the bundle after create must not affect the container
   * (runtime-spec "Lifecycle"; runc keeps it in its state.json). */
  if (snapshot_config (cfgp, dir, &c->st.config_path, err) < 0)
    return -1;
  /* sd_notify (csrun-oci(8) NOTIFY SOCKET): after the snapshot, which
   * keeps the config as given (exec'd processes don't get it, as in crun). */
  if (oci_notify_prepare (&c->cfg, dir, getenv ("NOTIFY_SOCKET"), err) < 0)
    return -1;
  c->st.systemd_cgroup = c->g->systemd_cgroup;
  if (c->cfg.n_annotations)
    {
      c->st.annotation_keys = calloc (c->cfg.n_annotations + 1, sizeof (char *));
      c->st.annotation_values = calloc (c->cfg.n_annotations + 1, sizeof (char *));
      if (c->st.annotation_keys == NULL || c->st.annotation_values == NULL)
        return csr_error_set (err, ENOMEM, "annotations");
      for (size_t i = 0; i < c->cfg.n_annotations; i++)
        {
          c->st.annotation_keys[i] = strdup (c->cfg.annotation_keys[i]);
          c->st.annotation_values[i] = strdup (c->cfg.annotation_values[i]);
        }
      c->st.n_annotations = c->cfg.n_annotations;
    }
  if (oci_state_save (c->root, &c->st, err) < 0)
    return -1;

  struct csr_oci_spec spec;
  cleanup_close int console = -1;
  if (fill_spec (c, o, bundle, rootfs, fifo_fd, &spec, &console, err) < 0)
    return -1;
  if (make_cgroup (c, o->id, err) < 0)
    return -1;
  spec.jail.cgroup = c->cg;
  const struct csr_oci_create_ops ops = { state_for_hooks, runtime_hooks, c };
  if (csr_oci_jail_create (&spec, &ops, pid, err) < 0)
    return -1;
  c->st.pid = *pid;
  c->st.pid_start = oci_pid_start_time (*pid, NULL);
  if (oci_state_save (c->root, &c->st, err) < 0)
    return -1;
  if (o->pid_file && write_pid_file (o->pid_file, *pid, err) < 0)
    return -1;
  return 0;
}

static void
creation_release (struct creation *c, bool failed, const char *id)
{
  if (failed && c->dir_made)
    {
      csr_error *e = NULL;
      if (oci_state_remove (c->root, id, &e) < 0)
        csr_error_free (e);
    }
  if (failed && c->cg)
    {
      csr_error *e = NULL;
      if (csr_cgroup_delete (c->cg, &e) < 0)
        csr_error_free (e);
    }
  csr_cgroup_free (c->cg);
  oci_state_release (&c->st);
  oci_config_release (&c->cfg);
  csr_seccomp_free (c->seccomp);
}

static int
do_create (struct csr_global *g, int argc, char **argv, bool run)
{
  struct create_opts o = { .run = run };
  static const char create_doc[]
      = "Create a container from an OCI bundle; it waits for `csrun start ID`.\v"
        "See csrun-oci(8).";
  static const char run_doc[]
      = "Create and start a container from an OCI bundle, wait for it, and exit with its "
        "status.\vSee csrun-oci(8).";
  struct argp argp
      = { create_options, parse_create, "ID", run ? run_doc : create_doc, NULL, NULL, NULL };
  argp_err_exit_status = 1;
  argp_parse (&argp, argc, argv, ARGP_IN_ORDER | ARGP_NO_HELP, NULL, &o);
  if (o.keep && !run)
    return oci_failf (g, "create: --keep is an option of run");
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  csr_error *e = NULL;
  if (oci_id_check (o.id, &e) < 0)
    return oci_fail (g, e);
  struct creation c = { .g = g, .root = root, .foreground = run && !o.detach, .console_ours = -1 };
  cleanup_close int console = -1;
  pid_t pid = 0;
  /* run waits for the container: be its parent even when an intermediate
   * process forked it (a pid namespace joined by path). */
  if (run)
    (void)prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  if (create_container (&c, &o, &pid, &e) < 0)
    {
      creation_release (&c, true, o.id);
      if (c.console_ours >= 0)
        close (c.console_ours);
      return oci_fail (g, e);
    }
  creation_release (&c, false, o.id);
  console = c.console_ours;
  if (!run)
    return 0;
  /* run: start it, then (unless detached) wait for it like a parent. */
  char *start_argv[] = { (char *)"csrun start", (char *)o.id, NULL };
  /* A terminal we copy ourselves must not wait behind READY=1: a container
   * filling it first would never get there. */
  oci_start_notify_in_background = console >= 0 && !o.detach;
  int rc = cmd_oci_start (g, 2, start_argv);
  if (rc != 0 || o.detach)
    return rc;
  if (console >= 0)
    {
      /* The container sent its terminal's master while it was created. */
      cleanup_close int master = oci_console_recv (console, &e);
      if (master < 0 || oci_console_proxy (master, STDIN_FILENO, STDOUT_FILENO, pid, &e) < 0)
        oci_warn (g, "terminal: %s", csr_error_text (e));
      csr_error_free (e);
      e = NULL;
    }
  int status;
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return oci_failf (g, "wait for the container: %s", strerror (errno));
  /* --keep leaves the stopped container for `delete` (runc). */
  char *delete_argv[] = { (char *)"csrun delete", (char *)o.id, NULL };
  if (!o.keep)
    (void)cmd_oci_delete (g, 2, delete_argv);
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 128 + WTERMSIG (status);
}

int
cmd_oci_create (struct csr_global *g, int argc, char **argv)
{
  return do_create (g, argc, argv, false);
}

int
cmd_oci_run (struct csr_global *g, int argc, char **argv)
{
  return do_create (g, argc, argv, true);
}
