/* csrun — front ends: one function per subcommand. */
#ifndef CSRUN_CMD_H
#define CSRUN_CMD_H

#include <stdbool.h>

/* Exit codes shared by the front ends (documented in csrun-run(1)). */
enum
{
  CSR_EXIT_OK = 0,
  CSR_EXIT_FAILED = 1,  /* the snippet failed */
  CSR_EXIT_USAGE = 2,   /* bad command line or bad input */
  CSR_EXIT_BLOCKED = 3, /* refused by the gate */
  CSR_EXIT_TIMEOUT = 124,
  CSR_EXIT_INTERNAL = 125, /* csrun itself failed */
};

struct csr_global
{
  int debug;
  /* OCI runtime flags (runc/crun): state root, log file and format, cgroup manager. */
  const char *root;
  const char *log_path;
  bool log_json;
  bool systemd_cgroup;
  const char *cgroup_manager; /* cgroupfs, systemd, disabled; NULL: cgroupfs */
  const char *rootless;       /* true, false, auto; NULL: auto */
  bool oci_flags;             /* one of the above was given */
};

int cmd_run (struct csr_global *g, int argc, char **argv);
int cmd_check (struct csr_global *g, int argc, char **argv);
int cmd_cache (struct csr_global *g, int argc, char **argv);
int cmd_rootfs (struct csr_global *g, int argc, char **argv);  /* package layers */
int cmd_sandbox (struct csr_global *g, int argc, char **argv); /* issue 15 */
int cmd_batch (struct csr_global *g, int argc, char **argv);   /* issue 17 */
int cmd_mcp (struct csr_global *g, int argc, char **argv);     /* issue 18 */
int cmd_tool_schema (struct csr_global *g, int argc, char **argv);

#endif
