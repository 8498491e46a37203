/* csrun — what seccomp.c (the compiler) and seccomp-cache.c (the BPF
 * cache) share.  Not installed. */
#ifndef CSRUN_JAIL_SECCOMP_INTERNAL_H
#define CSRUN_JAIL_SECCOMP_INTERNAL_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>

#include "seccomp.h"

/* Largest profile accepted, largest program the kernel loads. */
#define PROFILE_MAX (4u << 20)
#define BPF_INSN_MAX 4096u
#define BPF_BYTES_MAX (BPF_INSN_MAX * sizeof (struct sock_filter))

/* Sanity of a program from libseccomp or from the cache: whole
 * instructions, within the kernel's limit, starting with the load of
 * seccomp_data.arch (offset 4) and ending with a return.  WHAT names it in
 * errors. */
int csr_seccomp_check_bpf (const void *buf, size_t len, const char *what, csr_error **err);
/* *OUT for the program BPF[0..LEN) of the profile with DIGEST (takes
 * ownership of BPF). */
int csr_seccomp_make_result (char *bpf, size_t len, const char *digest, struct csr_seccomp **out,
                             csr_error **err);
/* Compile the profile JSON[0..LEN) (LENIENT: as an OCI profile) into an
 * exported program, malloc'ed in *BPF. */
int csr_seccomp_compile_to_bpf (const char *json, size_t len, bool lenient, char **bpf,
                                size_t *bpf_len, csr_error **err);

#endif
