/* csrun — sandbox files: the worker, forked by the keeper (files.c) into a
 * running sandbox (files-worker.c). */
#ifndef CSRUN_SANDBOX_FILES_WORKER_H
#define CSRUN_SANDBOX_FILES_WORKER_H

#include <locale.h>
#include <stdbool.h>

#include "../jail/seccomp.h"
#include "../jail/spec.h"
#include "files.h"

struct csr_files_work
{
  struct csr_files_req req;           /* its strings are the work's */
  const char *workdir;                /* of the sandbox: relative paths start there */
  int data;                           /* the client's pipe end */
  int status;                         /* the result goes here */
  locale_t locale;                    /* a UTF-8 LC_CTYPE (libarchive's names), or 0 */
  const struct csr_seccomp *lockdown; /* no exec, no executable mapping */
  const struct jail_snippet *sn;      /* the sandbox's jail: its rlimits */
};

/* The worker's life after it joined the sandbox (csr_sbx_fork_in's
 * function): become the sandbox's root, lock down, do W->req, write the
 * result (one JSON object) on W->status.  Returns the exit status: 0 done,
 * 1 the request failed. */
int csr_files_work (void *w);

/* The worker's seccomp filter (loaded after no_new_privs): execve,
 * execveat and personality fail, and so do mmap, mprotect and pkey_mprotect
 * with PROT_EXEC: nothing can be run or loaded (dlopen) any more. */
int csr_files_lockdown (struct csr_seccomp **out, csr_error **err);

/* The keeper's part (files.c): the "files" request. */
struct keeper_part;
extern const struct keeper_part keeper_part_files;

#endif
