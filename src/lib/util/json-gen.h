/* csrun — writing JSON: a yajl generator that keeps its first failure, so
 * that a builder reads straight through as the document it writes and
 * checks once at the end (csr_jgen_finish).  Strings are repaired to valid
 * UTF-8 first when they need it.  Reading JSON is json.h. */
#ifndef CSRUN_UTIL_JSON_GEN_H
#define CSRUN_UTIL_JSON_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "error.h"

struct csr_jgen
{
  yajl_gen g;
  yajl_gen_status st; /* the first failure of a yajl_gen call */
  bool oom;           /* a malloc of ours failed */
};

/* PRETTY: indented by two spaces (yajl_gen_beautify), else compact. */
int csr_jgen_init (struct csr_jgen *w, bool pretty, csr_error **err);
/* Whether every call so far succeeded. */
bool csr_jgen_ok (const struct csr_jgen *w);
void csr_jgen_map_open (struct csr_jgen *w);
void csr_jgen_map_close (struct csr_jgen *w);
void csr_jgen_array_open (struct csr_jgen *w);
void csr_jgen_array_close (struct csr_jgen *w);
/* A string (or a key: in a map they are the same call); NULL is "". */
void csr_jgen_str (struct csr_jgen *w, const char *s);
void csr_jgen_int (struct csr_jgen *w, long long v);
void csr_jgen_bool (struct csr_jgen *w, bool v);
/* A number with a fraction: at most 3 decimals, written without an exponent
 * ("0.1", "60.0"); not finite is 0. */
void csr_jgen_double (struct csr_jgen *w, double v);
/* KEY then the string VALUE. */
void csr_jgen_kv_str (struct csr_jgen *w, const char *key, const char *value);
/* KEY then the integer VALUE. */
void csr_jgen_kv_int (struct csr_jgen *w, const char *key, long long v);
/* KEY then an array of the strings of the NULL-terminated V. */
void csr_jgen_kv_strv (struct csr_jgen *w, const char *key, const char *const *v);
/* A parsed tree written back as it was (numbers keep their text). */
void csr_jgen_tree (struct csr_jgen *w, yajl_val v);
/* The document as a malloc'ed string (its length in *LEN, may be NULL), or
 * NULL with *ERR set: "cannot build WHAT ...", "out of memory building
 * WHAT".  Frees the generator either way. */
char *csr_jgen_finish (struct csr_jgen *w, const char *what, size_t *len, csr_error **err);
/* Frees the generator (for a builder that gives up). */
void csr_jgen_release (struct csr_jgen *w);

#endif
