/* csrun — seccomp: the OCI seccomp JSON profile (policies/seccomp/default.json)
 * compiled with libseccomp into a BPF program the jail loads last before exec. */
#ifndef CSRUN_SECCOMP_H
#define CSRUN_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>

#include "../util/error.h"

struct csr_seccomp
{
  struct sock_fprog prog; /* what prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) takes */
  void *bpf;              /* prog.filter points here */
  size_t bpf_len;         /* bytes */
  char digest[65];        /* sha256 of the profile text */
};

/* Compile an OCI seccomp profile (the "linux.seccomp" object of the runtime
 * spec: defaultAction, defaultErrnoRet, architectures, syscalls[{names,
 * action, errnoRet, args[{index, value, valueTwo, op}]}], flags) for the
 * native architecture.  Errors name the problem: malformed JSON (with the
 * position), unknown syscall names (ignored with a debug message when the
 * kernel/libseccomp lacks them is NOT acceptable for names libseccomp does
 * not know at all: those are errors; names it knows but this arch lacks are
 * skipped), wrong types, unknown actions/ops. */
int csr_seccomp_compile (const char *json, size_t len, struct csr_seccomp **out, csr_error **err);
/* The same from a file; CACHE_DIR (may be NULL) caches the exported BPF by
 * digest so later runs skip libseccomp entirely. */
int csr_seccomp_load (const char *path, const char *cache_dir, struct csr_seccomp **out,
                      csr_error **err);
void csr_seccomp_free (struct csr_seccomp *s);

#endif
