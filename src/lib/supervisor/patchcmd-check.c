/* csrun — --patch-cmd: check before the first attempt that the program the
 * shell will run exists, so that a typo is a usage error and not a failure
 * found only when a snippet first needs healing. */
#include "config.h"
#include "heal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"

/* The PATH the program runs with when the host has none (patchcmd.c). */
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* POSIX shell keywords and builtins (special and regular): a first word
 * among these runs without any file. */
static const char *const shell_words[]
    = { "!",       "{",     "case",    "for",   "if",     "until", "while",   ".",
        ":",       "[",     "alias",   "bg",    "break",  "cd",    "command", "continue",
        "echo",    "eval",  "exec",    "exit",  "export", "false", "fc",      "fg",
        "getopts", "hash",  "jobs",    "kill",  "printf", "pwd",   "read",    "readonly",
        "return",  "set",   "shift",   "test",  "times",  "trap",  "true",    "type",
        "ulimit",  "umask", "unalias", "unset", "wait",   "local" };

static bool
is_shell_word (const char *w)
{
  for (size_t i = 0; i < sizeof shell_words / sizeof shell_words[0]; i++)
    if (strcmp (w, shell_words[i]) == 0)
      return true;
  return false;
}

/* A regular file we may execute. */
static bool
executable_file (const char *path, int *why)
{
  struct stat st;
  if (stat (path, &st) < 0)
    {
      *why = errno;
      return false;
    }
  if (!S_ISREG (st.st_mode))
    {
      *why = EISDIR;
      return false;
    }
  if (access (path, X_OK) < 0)
    {
      *why = EACCES;
      return false;
    }
  return true;
}

int
csr_patchcmd_check (const char *program, csr_error **err)
{
  if (program == NULL)
    return csr_error_set (err, 0, "empty");
  const char *s = program + strspn (program, " \t\n");
  size_t n = strcspn (s, " \t\n");
  if (n == 0)
    return csr_error_set (err, 0, "empty");
  cleanup_free char *word = strndup (s, n);
  if (word == NULL)
    return csr_error_set (err, ENOMEM, "cannot allocate");
  /* Shell syntax in the first word (quoting, expansions, redirections,
   * grouping, an assignment): only the shell knows what it runs. */
  if (strpbrk (word, "'\"\\$`()<>|;&*?[]~=#") != NULL && strcmp (word, "[") != 0)
    return 0;
  if (is_shell_word (word))
    return 0;

  int why = 0;
  if (strchr (word, '/') != NULL)
    {
      if (executable_file (word, &why))
        return 0;
      if (why == EACCES)
        return csr_error_set (err, 0, "%s: not executable", word);
      if (why == EISDIR)
        return csr_error_set (err, 0, "%s: not a regular file", word);
      return csr_error_set (err, 0, "%s: %s", word, strerror (why));
    }

  const char *path = getenv ("PATH");
  if (path == NULL)
    path = DEFAULT_PATH;
  bool found_not_exec = false;
  for (const char *p = path;;)
    {
      size_t len = strcspn (p, ":");
      cleanup_free char *cand = NULL;
      /* An empty entry is the current directory, as the shell reads it. */
      if (asprintf (&cand, "%.*s/%s", (int)(len ? len : 1), len ? p : ".", word) < 0)
        return csr_error_set (err, ENOMEM, "cannot allocate");
      if (executable_file (cand, &why))
        return 0;
      if (why == EACCES)
        found_not_exec = true;
      if (p[len] == '\0')
        break;
      p += len + 1;
    }
  if (found_not_exec)
    return csr_error_set (err, 0, "%s: found on PATH but not executable", word);
  return csr_error_set (err, 0, "%s: not found on PATH", word);
}
