/* csrun — Python programs run in the jail, embedded at build time from policies/. */
#ifndef CSRUN_LAUNCH_H
#define CSRUN_LAUNCH_H

#include <stddef.h>

/* The gate (policies/gate.py): gate, then run the snippet on "pass". */
extern const char csr_gate_py[];
extern const size_t csr_gate_py_len;

#endif
