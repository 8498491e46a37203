/* csrun — the Python launcher run in the jail (policies/launch.py, embedded at build time). */
#ifndef CSRUN_LAUNCH_H
#define CSRUN_LAUNCH_H

#include <stddef.h>

extern const char csr_launch_py[];
extern const size_t csr_launch_py_len;

#endif
