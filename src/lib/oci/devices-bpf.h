/* csrun — the cgroup v2 device program (see devices-bpf.c); the internals
 * are here for the unit tests. */
#ifndef CSRUN_OCI_DEVICES_BPF_H
#define CSRUN_OCI_DEVICES_BPF_H

#include <linux/bpf.h>
#include <stddef.h>

#include "../util/error.h"
#include "oci-config.h"

/* The program for RULES (already the effective list: oci_devices_effective),
 * malloc'ed into *OUT (*N_OUT instructions). */
int oci_devices_bpf_build (const struct oci_dev_rule *rules, size_t n, struct bpf_insn **out,
                           size_t *n_out, csr_error **err);
/* Load program P and attach it to the v2 cgroup directory DIR, replacing the
 * device programs attached there before. */
int oci_devices_bpf_attach (const char *dir, const struct bpf_insn *p, size_t n, csr_error **err);

#endif
