/* csrun — the gate, precompiled for the rootfs's interpreter.
 *
 * Python compiles a -c program on every start, and the gate is large enough
 * for that to be most of its cost.  So the gate's code object is compiled
 * once per (gate, interpreter) in the jail, cached as marshal data next to
 * the unpacked rootfs trees, and handed to each run as fd 4 (a sealed memfd).
 * A tiny bootstrap given with -c loads it, or compiles the source it also
 * gets when the cache is missing or was made by another interpreter. */
#ifndef CSRUN_GATECODE_H
#define CSRUN_GATECODE_H

#include "../jail/spec.h"
#include "../util/error.h"

/* The -c program that loads the gate: `python3 -I -S -u -c BOOT GATE_SOURCE POLICY ARGS...`. */
extern const char csr_gate_boot_py[];

/* Return in *FD a memfd holding "<sys.version>\n<marshal data>" for the gate
 * under the rootfs's interpreter, compiling it in a jail built from BASE
 * (its rootfs and environment) on a cache miss.  CACHE_DIR holds the cache
 * (NULL: no caching, compile every time).  On any failure *FD is -1 and the
 * result is still 0: the bootstrap then compiles the source itself; -1 only
 * for csrun errors that must stop the run, CSR_TRUST_REFUSED when CACHE_DIR
 * fails the trust check (util/trust.h). */
int csr_gate_code_fd (const struct jail_snippet *base, const char *cache_dir, int *fd,
                      csr_error **err);

#endif
