/* csrun — a small Python tokenizer and source edits for the local healer:
 * names, numbers, strings (with f-string and bytes flags), operators with
 * matched brackets, and logical lines; edits replace byte ranges of the
 * source in one pass.  Internal to src/lib/supervisor. */
#ifndef CSRUN_PYTOK_H
#define CSRUN_PYTOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NONE SIZE_MAX

struct sb
{
  char *s;
  size_t len, cap;
  bool oom;
};

enum tk
{
  TK_NAME,
  TK_NUMBER,
  TK_STRING,
  TK_OP,
  TK_NEWLINE, /* end of a logical line (also the virtual one at the end) */
};

enum
{
  STR_F = 1, /* f-string */
  STR_B = 2, /* bytes */
};

struct tok
{
  enum tk kind;
  size_t start, end;
  int line;     /* physical line of START (1-based) */
  int depth;    /* bracket depth before the token */
  bool bol;     /* first token of a logical line */
  unsigned str; /* STR_* flags of a TK_STRING */
  size_t match; /* the partner of a bracket, NONE if unbalanced */
};

struct toks
{
  const char *src;
  size_t len;
  struct tok *v;
  size_t n, cap;
};

struct edit
{
  size_t start, end; /* replace [start, end) of the source */
  char *text;
};

struct edits
{
  struct edit *v;
  size_t n, cap;
};

void pt_sb_add (struct sb *b, const char *s, size_t len);
void pt_sb_str (struct sb *b, const char *s);
char *pt_sb_take (struct sb *b);
bool pt_is_id_start (unsigned char c);
bool pt_is_id_char (unsigned char c);
int pt_tokenize (const char *src, size_t len, struct toks *t);
void pt_toks_release (struct toks *t);
bool pt_tok_eq (const struct toks *t, size_t i, const char *s);
bool pt_tok_in (const struct toks *t, size_t i, const char *const *set);
bool pt_is_keyword (const struct toks *t, size_t i);
size_t pt_logical_end (const struct toks *t, size_t i);
int pt_edit_add (struct edits *e, size_t start, size_t end, const char *text, size_t len);
void pt_edits_release (struct edits *e);
char *pt_apply_edits (const char *src, size_t len, struct edits *e);

#endif
