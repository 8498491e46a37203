/* csrun — reading JSON documents held as yajl trees: the one object lookup,
 * the byte pre-scan and duplicate-key check every strict parser runs first,
 * and typed getters that name the JSON path of a bad value in their errors
 * ("process.user.uid: expected an unsigned integer, got -1").
 *
 * Writing JSON is json-gen.h. */
#ifndef CSRUN_UTIL_JSON_H
#define CSRUN_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "error.h"

/* The deepest nesting csr_json_prescan accepts.  Real documents stay under
 * 10; the bound keeps yajl_tree_free's recursion and yajl_gen's depth limit
 * (YAJL_MAX_DEPTH) out of reach. */
#define CSR_JSON_MAX_DEPTH 64

/* ------------------------------------------------------------ lookups */

/* OBJ[KEY] (the first one), or NULL when OBJ is NULL, not an object, or
 * lacks KEY. */
yajl_val csr_json_get (yajl_val obj, const char *key);
/* ARR[I], or NULL when ARR is not an array or is too short. */
yajl_val csr_json_at (yajl_val arr, size_t i);
/* V as a string, or NULL when it is not one (or is NULL). */
const char *csr_json_str (yajl_val v);
/* OBJ[KEY] as an integer, or DFLT when it is missing or not an integer. */
long long csr_json_int (yajl_val obj, const char *key, long long dflt);
/* OBJ[KEY] as a count: the integer when it is positive, else 0. */
uint64_t csr_json_u64 (yajl_val obj, const char *key);
/* "a string", "a number", "an object", ...: what a JSON value is, for errors. */
const char *csr_json_type_name (yajl_val v);

void csr_json_freep (yajl_val *v);
#define cleanup_yajl_val __attribute__ ((cleanup (csr_json_freep)))

/* ------------------------------------------------------------ document checks */

/* What yajl_tree_parse would let through or choke on: a NUL byte (the copy
 * is a C string), a comment (yajl_tree_parse enables them), a "\u0000"
 * escape (it would cut a string short silently), nesting deeper than
 * CSR_JSON_MAX_DEPTH.  S[0..LEN); "invalid JSON: ..." errors. */
int csr_json_prescan (const char *s, size_t len, csr_error **err);
/* The same; with NUL_ESCAPES a "\u0000" is let through: a document of
 * csrun's own whose strings may hold a snippet's NUL bytes (a result, a
 * batch report's line), read for its other members only. */
int csr_json_prescan_opt (const char *s, size_t len, bool nul_escapes, csr_error **err);

/* ------------------------------------------------------------ getters with a path */

/* Where a strict parser is in the document, for its error messages.  WHAT
 * names the document in the rare errors that have no path (out of memory):
 * "config.json". */
struct csr_jpath
{
  csr_error **err;
  const char *what;
  size_t len;
  char path[1024]; /* "linux.uidMappings[0].size"; truncated when longer */
};

/* Push ".KEY" (just "KEY" at the top) or "[I]"; returns what to pop to. */
size_t csr_jpath_push_key (struct csr_jpath *x, const char *key);
size_t csr_jpath_push_index (struct csr_jpath *x, size_t i);
void csr_jpath_pop (struct csr_jpath *x, size_t saved);

/* Set the error "PATH: MESSAGE" (just MESSAGE at the top level), control
 * characters written as C escapes so that it stays one line; returns -1. */
int csr_jpath_fail (struct csr_jpath *x, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
/* Out of memory at the current path; returns -1. */
int csr_jpath_oom (struct csr_jpath *x);

/* V's type must be T ("expected WHAT, got ..."); yajl_t_true also accepts false. */
int csr_jpath_expect (struct csr_jpath *x, yajl_val v, yajl_type t, const char *what);

/* The value checkers: V itself, at the current path.  0 or -1. */
/* An unsigned integer in [0, MAX], read from the number's text so that
 * values above INT64_MAX (rlimits of 2^64-1) are exact. */
int csr_jpath_u64 (struct csr_jpath *x, yajl_val v, uint64_t max, uint64_t *out);
int csr_jpath_u32 (struct csr_jpath *x, yajl_val v, uint64_t max, uint32_t *out);
/* A signed integer in [MIN, MAX]. */
int csr_jpath_i64 (struct csr_jpath *x, yajl_val v, int64_t min, int64_t max, int64_t *out);
/* A string, strdup'ed into *OUT (the old *OUT is freed). */
int csr_jpath_string (struct csr_jpath *x, yajl_val v, char **out);

/* Look KEY up in OBJ.  Absent (or null when optional): *OUT = NULL, returns 0
 * (or -1, "required field is missing", when REQUIRED).  Present: pushes KEY
 * onto the path (the caller pops to *SAVED) and returns 1. */
int csr_jpath_field (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                     yajl_val *out, size_t *saved);

/* The getters: OBJ[KEY] checked and stored; 0 when absent and optional (the
 * output left alone), -1 on an error.  *PRESENT (may be NULL) is set when
 * a value was stored. */
int csr_jpath_get_string (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                          char **out);
int csr_jpath_get_bool (struct csr_jpath *x, yajl_val obj, const char *key, bool *out);
int csr_jpath_get_u64 (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                       uint64_t max, uint64_t *out, bool *present);
int csr_jpath_get_u32 (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                       uint64_t max, uint32_t *out, bool *present);
int csr_jpath_get_i64 (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                       int64_t min, int64_t max, int64_t *out, bool *present);
/* OBJ[KEY] must be of type T when present ("expected WHAT, ..."); *OUT NULL
 * when absent.  Returns 1 with the path left at KEY (pop to *SAVED) when
 * *OUT is set. */
int csr_jpath_get_typed (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                         yajl_type t, const char *what, yajl_val *out, size_t *saved);
/* Element I of the array V, checked to be an object; pushes "[I]" (pop to
 * *SAVED) on success. */
int csr_jpath_array_object (struct csr_jpath *x, yajl_val v, size_t i, yajl_val *out,
                            size_t *saved);

/* Duplicate keys mean different things to different parsers (yajl_tree
 * keeps the first, Go's encoding/json the last): refuse them anywhere in V
 * ("PATH: duplicate key 'K'"). */
int csr_jpath_check_duplicates (struct csr_jpath *x, yajl_val v);

#endif
