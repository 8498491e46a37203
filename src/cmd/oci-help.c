/* csrun — the help of the OCI commands, in the layout runc's command line
 * (urfave/cli) prints, because tools and runc's own tests read it: a NAME:
 * section whose next line is "   PROG CMD - summary", then USAGE:, an
 * optional DESCRIPTION: and OPTIONS:.  PROG is the name csrun was started
 * as (argv[0]'s base name), so a link named after another runtime prints
 * that name, as the version line does. */
#include "config.h"
#include "oci.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct oci_help_entry
{
  const char *name;
  const char *summary;
  const char *args;
  const char *description; /* or NULL */
  const char *options;     /* preformatted lines, or NULL */
};

#define CREATE_OPTS                                                                                \
  "   --bundle value, -b value    the bundle: config.json and the rootfs (default: .)\n"           \
  "   --config value, -f value    a config.json to use instead of BUNDLE/config.json\n"            \
  "   --console-socket value      AF_UNIX socket that receives the terminal's master fd\n"         \
  "   --pid-file value            write the container's host pid to this file\n"                   \
  "   --no-pivot                  move the rootfs to / and chroot instead of pivot_root\n"         \
  "   --no-new-keyring            accepted (csrun makes no session keyring)\n"                     \
  "   --preserve-fds value        pass N more descriptors (3 .. 3+N-1) to the process\n"           \
  "   --help, -h                  show this help\n"

static const struct oci_help_entry entries[] = {
  { "create", "create a container from a bundle; it waits for 'start'", "<container-id>",
    "The container's process is made (namespaces, mounts, cgroup) and waits until\n"
    "   'start' releases it.  Its state is under the global --root.",
    CREATE_OPTS },
  { "run", "create and start a container, and wait for it", "<container-id>",
    "Without --detach the command waits for the container's process and exits\n"
    "   with its status (128+N when signal N killed it); the container is deleted\n"
    "   afterwards unless --keep is given.  (Without a bundle or an OCI global\n"
    "   option, 'run FILE' is csrun's snippet runner: see csrun(1).)",
    CREATE_OPTS "   --detach, -d                start the container and return at once\n"
                "   --keep                      keep the stopped container's state (run only)\n"
                "   --no-subreaper              accepted for compatibility\n" },
  { "start", "start a created container", "<container-id>", NULL,
    "   --help, -h                  show this help\n" },
  { "state", "print the state document of a container (JSON)", "<container-id>", NULL,
    "   --help, -h                  show this help\n" },
  { "kill", "send a signal to a container's init (or to all its processes)",
    "<container-id> [signal]",
    "The signal is a number, or a name with or without SIG (TERM, SIGKILL, RTMIN+3);\n"
    "   the default is SIGTERM; 0 only checks that the container's process exists.",
    "   --all, -a                   signal every process of the container\n"
    "   --help, -h                  show this help\n" },
  { "delete", "delete a container's state and cgroup", "<container-id>",
    "A created or stopped container is deleted; a running or paused one only with\n"
    "   --force, which kills it first (SIGKILL).",
    "   --force, -f                 kill the container if it is still running; no error\n"
    "                               when it does not exist\n"
    "   --help, -h                  show this help\n" },
  { "list", "list the containers under the state root", "", NULL,
    "   --format value, -f value    table or json (default: \"table\")\n"
    "   --quiet, -q                 print only the container IDs\n"
    "   --help, -h                  show this help\n" },
  { "ps", "list the processes of a container", "<container-id> [ps options]",
    "Runs ps(1) with the given options (default -ef) and prints the lines of the\n"
    "   container's processes; -f json prints their host pids as a JSON array.",
    "   --format value, -f value    table or json (default: \"table\")\n"
    "   --help, -h                  show this help\n" },
  { "events", "print a container's statistics and OOM events (JSON lines)", "<container-id>",
    "Every --interval, a {\"type\":\"stats\",\"id\":ID,\"data\":{...}} line from the\n"
    "   container's cgroup; an {\"type\":\"oom\",\"id\":ID} line when the OOM killer\n"
    "   acted in it; until the container stops.",
    "   --interval value            the statistics interval (default: 5s; 100ms, 1s, 2m)\n"
    "   --stats                     print the statistics once and exit\n"
    "   --help, -h                  show this help\n" },
  { "spec", "write a default config.json", "",
    "Writes BUNDLE/config.json (it must not exist): sh in ./rootfs with the usual\n"
    "   namespaces; --rootless adds a user namespace mapping the caller to root.",
    "   --bundle value, -b value    the directory to write config.json in (default: .)\n"
    "   --rootless                  a configuration for an unprivileged caller\n"
    "   --help, -h                  show this help\n" },
  { "features", "print what this runtime supports (JSON)", "", NULL,
    "   --help, -h                  show this help\n" },
  { "pause", "freeze all the processes of a container", "<container-id>", NULL,
    "   --help, -h                  show this help\n" },
  { "resume", "thaw a paused container", "<container-id>", NULL,
    "   --help, -h                  show this help\n" },
  { "exec", "run a new process in a running container", "<container-id> <command> [args...]",
    "The process is described by the options, or by --process FILE (a config.json\n"
    "   process object).  See csrun-oci(8) for the options.",
    "   --process value, -p value   the process as JSON (a file, or /dev/fd/N)\n"
    "   --console-socket value      AF_UNIX socket that receives the terminal's master fd\n"
    "   --tty, -t                   allocate a pseudo-terminal\n"
    "   --cwd value                 the working directory\n"
    "   --env value, -e value       set an environment variable NAME=VALUE\n"
    "   --user value, -u value      UID[:GID]\n"
    "   --additional-gids value, -g value  supplementary groups\n"
    "   --cap value, -c value       add a capability\n"
    "   --no-new-privs              set no_new_privs\n"
    "   --detach, -d                do not wait for the process\n"
    "   --pid-file value            write the process's host pid to this file\n"
    "   --preserve-fds value        pass N more descriptors to the process\n"
    "   --apparmor value            the AppArmor profile (recorded, not applied; refused\n"
    "                               where AppArmor is off)\n"
    "   --process-label value       the SELinux label (recorded, not applied)\n"
    "   --cgroup value              run in this sub-cgroup: [CONTROLLER[,...]:]PATH\n"
    "   --ignore-paused             exec even when the container is paused\n"
    "   --help, -h                  show this help\n" },
  { "update", "change a running (or paused) container's resource limits", "<container-id>",
    "Only what is given is written (a --cpu-quota alone keeps the period).\n"
    "   Sizes are bytes or 64M, 1G; -1 is unlimited.",
    "   --resources value, -r value  a linux.resources JSON object (a file, or - for stdin)\n"
    "   --memory value              the memory limit\n"
    "   --memory-swap value         the memory+swap limit\n"
    "   --memory-reservation value  the soft memory limit\n"
    "   --kernel-memory value, --kernel-memory-tcp value  (where the kernel has them)\n"
    "   --pids-limit value          the maximum number of processes\n"
    "   --cpu-quota value           CPU time in microseconds per period\n"
    "   --cpu-period value          the CPU period in microseconds\n"
    "   --cpu-share value           the CPU weight (shares)\n"
    "   --cpu-rt-period value, --cpu-rt-runtime value  realtime scheduling (cgroup v1)\n"
    "   --cpuset-cpus value, --cpuset-mems value  CPUs and memory nodes (0-2,4)\n"
    "   --blkio-weight value        10..1000\n"
    "   --help, -h                  show this help\n" },
  { "checkpoint", "checkpoint a running container (not supported by csrun)", "<container-id>",
    "csrun does not checkpoint process memory (no CRIU support): the command\n"
    "   fails with exit status 1.",
    "   --help, -h                  show this help\n" },
  { "restore", "restore a container from a checkpoint (not supported by csrun)", "<container-id>",
    "csrun does not checkpoint process memory (no CRIU support): the command\n"
    "   fails with exit status 1.",
    "   --help, -h                  show this help\n" },
  { "help", "show the list of commands, or the help of one command", "[command]", NULL, NULL },
  { NULL, NULL, NULL, NULL, NULL },
};

static const struct oci_help_entry *
find (const char *name)
{
  for (const struct oci_help_entry *e = entries; name && e->name; e++)
    if (strcmp (e->name, name) == 0)
      return e;
  return NULL;
}

const char *
oci_prog_name (void)
{
  const char *p = program_invocation_short_name;
  return p && *p ? p : "csrun";
}

bool
oci_help_exists (const char *cmd)
{
  return find (cmd) != NULL;
}

int
oci_help (const char *cmd, FILE *out)
{
  const struct oci_help_entry *e = find (cmd);
  if (e == NULL)
    return -1;
  const char *prog = oci_prog_name ();
  fprintf (out, "NAME:\n   %s %s - %s\n\nUSAGE:\n   %s %s%s%s%s\n", prog, e->name, e->summary, prog,
           e->name, e->options ? " [command options]" : "", *e->args ? " " : "", e->args);
  if (e->description)
    fprintf (out, "\nDESCRIPTION:\n   %s\n", e->description);
  if (e->options)
    fprintf (out, "\nOPTIONS:\n%s", e->options);
  fprintf (out, "\nSee csrun-oci(8).\n");
  return 0;
}

static const char global_options[]
    = "   --debug                     debug messages (on stderr, or in the --log file)\n"
      "   --root value                the state directory (default: $XDG_RUNTIME_DIR/csrun,\n"
      "                               else /run/csrun)\n"
      "   --log value                 also write errors, warnings (and --debug) to this file\n"
      "   --log-format value          text or json (default: \"text\")\n"
      "   --systemd-cgroup            cgroupsPath is slice:prefix:name (systemd style)\n"
      "   --cgroup-manager value      cgroupfs, systemd or disabled\n"
      "   --rootless value            true, false or auto: accepted (csrun detects it)\n"
      "   --help, -h                  show this help\n"
      "   --version, -v               print the version\n";

void
oci_help_global (FILE *out)
{
  const char *prog = oci_prog_name ();
  fprintf (out,
           "NAME:\n"
           "   %s - Open Container Initiative runtime, and a jail for untrusted Python\n\n"
           "USAGE:\n"
           "   %s [global options] command [command options] [arguments...]\n\n"
           "DESCRIPTION:\n"
           "   csrun runs untrusted Python snippets in a disposable rootless jail, and\n"
           "   OCI bundles as a runc/crun-compatible runtime (csrun-oci(8)).\n\n"
           "COMMANDS:\n"
           "   run         run a Python snippet (csrun(1)), or a container from a bundle\n"
           "   check       run only the AST gate on a snippet (in the jail)\n"
           "   batch       run many snippets in parallel jails: report, resume, shards\n"
           "   cache       verify [--repair], ls, prune [--older-than D] the cache\n"
           "   sandbox     long-lived jails: exec, run, sessions, files, ports, checkpoints\n"
           "   mcp         the Model Context Protocol on stdin/stdout: tools for agents\n"
           "   tool-schema the agent tools' schemas: --format openai|anthropic|gemini|mcp\n"
           "   hook        OCI hook: gate a container's Python script, scan its log\n",
           prog, prog);
  for (const struct oci_help_entry *e = entries; e->name; e++)
    if (strcmp (e->name, "run") != 0)
      fprintf (out, "   %-11s %s\n", e->name, e->summary);
  fprintf (out,
           "\nGLOBAL OPTIONS:\n%s\nRun '%s help COMMAND' or '%s COMMAND --help' for a "
           "command's options.  See csrun(1), csrun-oci(8).\n",
           global_options, prog, prog);
}

int
cmd_oci_unsupported (struct csr_global *g, int argc, char **argv)
{
  const char *cmd = argv[0];
  const char *sp = strchr (cmd, ' ');
  if (sp)
    cmd = sp + 1;
  for (int i = 1; i < argc; i++)
    if (strcmp (argv[i], "-h") == 0 || strcmp (argv[i], "--help") == 0)
      return oci_help (cmd, stdout) < 0 ? 1 : 0;
  return oci_failf (g, "%s is not supported by csrun (it has no CRIU support)", cmd);
}
