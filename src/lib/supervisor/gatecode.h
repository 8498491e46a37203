/* csrun — the gate, precompiled for the rootfs's interpreter.
 *
 * Python compiles a -c program on every start, and the gate is large enough
 * for that to be most of its cost.  So the gate's code object is compiled
 * once per (gate, interpreter) in the jail, cached as marshal data next to
 * the unpacked rootfs trees, and handed to each run as fd 4 (a sealed memfd).
 * A tiny bootstrap given with -c loads it, or compiles the source that
 * comes with it when the cache is missing or was made by another
 * interpreter. */
#ifndef CSRUN_GATECODE_H
#define CSRUN_GATECODE_H

#include "../jail/spec.h"
#include "../util/error.h"

/* The -c program that loads the gate: `python3 -I -S -u -c BOOT GATE_SOURCE POLICY ARGS...`;
 * GATE_SOURCE is "" when fd 4 is the memfd of csr_gate_code_fd (which holds
 * the source too: Python decodes every argument at start-up, 0.7 ms for the
 * 47 KB of the gate). */
extern const char csr_gate_boot_py[];
/* issue 17: its function alone, _csrun_boot(), which returns the gate's code
 * object (and puts the resolver's in the caller's globals): a zygote's -c
 * program starts with it (zygote.h). */
extern const char csr_gate_boot_def_py[];

/* Return in *FD a sealed memfd holding "csrun-gate N\n", the gate's source
 * (N bytes) and "<sys.version>\n<marshal data>" for the gate under the
 * rootfs's interpreter, compiling it in a jail built from BASE (its rootfs
 * and environment) on a cache miss.  CACHE_DIR holds the cache (NULL: no
 * caching, compile every time).  When the gate can't be compiled the memfd
 * holds only the source, which the bootstrap then compiles itself.  -1 only
 * for csrun errors that must stop the run (no memfd), CSR_TRUST_REFUSED when
 * CACHE_DIR fails the trust check (util/trust.h). */
int csr_gate_code_fd (const struct jail_snippet *base, const char *cache_dir, int *fd,
                      csr_error **err);

#endif
