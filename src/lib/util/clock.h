/* csrun — the monotonic clock (CLOCK_MONOTONIC: deadlines, timeouts and
 * durations; never the wall clock). */
#ifndef CSRUN_UTIL_CLOCK_H
#define CSRUN_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds since an arbitrary start (boot). */
static inline int64_t
csr_mono_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whole milliseconds. */
static inline int64_t
csr_mono_ms (void)
{
  return csr_mono_ns () / 1000000;
}

/* Seconds, with the fraction. */
static inline double
csr_mono_s (void)
{
  return (double)csr_mono_ns () / 1e9;
}

#endif
