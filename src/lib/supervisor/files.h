/* csrun — files in and out of `csrun run`: --in inputs packed once on the
 * host (inputs.c), the final attempt's /work delivered to --out DIR
 * (outputs.c), and what the result's "inputs"/"outputs" say about them. */
#ifndef CSRUN_FILES_H
#define CSRUN_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"
#include "../util/filearg.h"

struct csr_input_report
{
  char *path;    /* as given */
  char *dest;    /* in the jail */
  uint64_t size; /* bytes of regular files */
};

struct csr_output_file
{
  char *path; /* relative to /work and to DIR */
  uint64_t size;
  char sha256[65];
};

struct csr_output_skip
{
  char *path;
  char *reason;
};

struct csr_files_report
{
  struct csr_input_report *inputs;
  size_t n_inputs;
  const char *out_dir; /* NULL: no --out */
  struct csr_output_file *outputs;
  size_t n_outputs, cap_outputs;
  struct csr_output_skip *skipped;
  size_t n_skipped, cap_skipped;
  uint64_t out_bytes;
};

/* Pack IN (N entries) into a sealed memfd (*FD): every regular file's bytes
 * now, once, so every attempt sees the same.  The top-level path is
 * followed, a symlink inside a directory is kept as a symlink; a fifo,
 * socket or device is refused, and so is more than MAX bytes in all or more
 * than TMP_SIZE bytes or about TMP_INODES files for the /work or the /tmp
 * tmpfs.  Fills REP->inputs.
 * -1 with *ERR: the inputs are wrong (a usage error) when *BAD_INPUT. */
int csr_inputs_pack (const struct csr_in_arg *in, size_t n, uint64_t max, uint64_t tmp_size,
                     uint64_t tmp_inodes, struct csr_files_report *rep, int *fd, bool *bad_input,
                     csr_error **err);

/* Deliver the pack in FD (the final attempt's /work, written by the jail's
 * init) to DIR, made when missing (its parent must exist), at most MAX
 * bytes: see csrun-run(1), FILES IN AND OUT.  Fills REP's outputs and
 * skipped lists; -1 with *ERR when DIR can't be written (then no file is
 * left under its final name half written). */
int csr_outputs_deliver (int fd, const char *dir, uint64_t max, struct csr_files_report *rep,
                         csr_error **err);

int csr_files_report_skip (struct csr_files_report *rep, const char *path, const char *reason);
void csr_files_report_release (struct csr_files_report *rep);

#endif
