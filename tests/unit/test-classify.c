#include "config.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/classify.h"
#include "util/fs.h"

/* The fixtures in tests/unit/tracebacks/ are real CPython 3.11 stderr:
 * NAME.py ran as snippet.py through csrun's launcher and NAME.txt is what it
 * printed (tracebacks/runner.sh regenerates them). */

static char *
fixture_path (const char *name, const char *ext)
{
  char *path = NULL;
  const char *srcdir = getenv ("CSRUN_SRCDIR");
  if (srcdir && *srcdir)
    cr_assert_geq (asprintf (&path, "%s/tests/unit/tracebacks/%s.%s", srcdir, name, ext), 0);
  else
    {
      /* Next to this source file. */
      const char *slash = strrchr (__FILE__, '/');
      int dir = slash ? (int)(slash - __FILE__) : 1;
      cr_assert_geq (
          asprintf (&path, "%.*s/tracebacks/%s.%s", dir, slash ? __FILE__ : ".", name, ext), 0);
    }
  return path;
}

static char *
load (const char *name, const char *ext, size_t *len)
{
  char *path = fixture_path (name, ext);
  char *text = NULL;
  size_t n = 0;
  csr_error *err = NULL;
  int rc = csr_read_file (path, 1 << 24, &text, &n, &err);
  cr_assert_eq (rc, 0, "cannot read %s: %s", path, err ? err->msg : "?");
  free (path);
  if (len)
    *len = n;
  return text;
}

static void
check_diag (const struct csr_diagnosis *d, const char *type, const char *message, int line,
            const char *context)
{
  cr_assert_not_null (d->error_type);
  cr_assert_str_eq (d->error_type, type);
  cr_assert_not_null (d->message);
  cr_assert_str_eq (d->message, message);
  cr_assert_eq (d->line, line, "line %d, expected %d", d->line, line);
  if (context == NULL)
    cr_assert_null (d->context, "unexpected context:\n%s", d->context);
  else
    {
      cr_assert_not_null (d->context, "no context");
      cr_assert_str_eq (d->context, context);
    }
}

static void
check_fixture (const char *name, int found, const char *type, const char *message, int line,
               const char *context)
{
  size_t len;
  char *err_text = load (name, "txt", &len);
  char *code = load (name, "py", NULL);
  struct csr_diagnosis d;
  int rc = csr_classify_traceback (err_text, len, code, &d);
  cr_assert_eq (rc, found, "%s: returned %d", name, rc);
  check_diag (&d, type, message, line, context);
  csr_diagnosis_release (&d);
  cr_assert_null (d.error_type);
  free (err_text);
  free (code);
}

/* Classify literal stderr text. */
static int
classify_str (const char *text, const char *code, struct csr_diagnosis *d)
{
  return csr_classify_traceback (text, strlen (text), code, d);
}

/* --------------------------------------------------------------- fixtures */

Test (fixture, name_error)
{
  check_fixture ("name-error", 1, "NameError", "name 'math' is not defined", 4,
                 "  2: total = 0\n"
                 "  3: for v in values:\n"
                 "> 4:     total += math.sqrt(v)\n"
                 "  5: print(total)\n");
}

Test (fixture, name_error_absolute_path)
{
  /* python3 snippet.py by hand names the frame by its absolute path. */
  check_fixture ("abspath-name-error", 1, "NameError", "name 'Counter' is not defined", 2,
                 "  1: rows = [(\"a\", 1), (\"b\", 2)]\n"
                 "> 2: counts = Counter()\n"
                 "  3: for key, n in rows:\n"
                 "  4:     counts[key] += n\n");
}

Test (fixture, type_error_concat)
{
  check_fixture ("type-concat", 1, "TypeError", "can only concatenate str (not \"int\") to str", 3,
                 "  1: def report(count):\n"
                 "  2:     label = \"Result: \"\n"
                 "> 3:     return label + count\n"
                 "  4:\n"
                 "  5:\n");
}

Test (fixture, zero_division_nested)
{
  /* Three snippet frames: the innermost (mean, line 2) is the failing one. */
  check_fixture ("zero-division-nested", 1, "ZeroDivisionError", "division by zero", 2,
                 "  1: def mean(xs):\n"
                 "> 2:     return sum(xs) / len(xs)\n"
                 "  3:\n"
                 "  4:\n");
}

Test (fixture, key_error)
{
  check_fixture ("key-error", 1, "KeyError", "'user'", 3,
                 "  1: config = {\"host\": \"localhost\", \"port\": 8080}\n"
                 "  2: print(\"connecting\")\n"
                 "> 3: user = config[\"user\"]\n"
                 "  4: print(user)\n");
}

Test (fixture, key_error_multiline_repr)
{
  /* The key's repr spans four lines, two of them indented. */
  check_fixture ("key-error-multiline", 1, "KeyError", "Cell(\n  row=1,\n  col=2\n)", 13,
                 "  11:\n"
                 "  12: grid = {}\n"
                 "> 13: print(grid[Cell(1, 2)])\n");
}

Test (fixture, json_decode_error)
{
  /* Dotted type kept whole; the stdlib frames (json/decoder.py) are skipped. */
  check_fixture ("json-decode", 1, "json.decoder.JSONDecodeError",
                 "Expecting value: line 1 column 1 (char 0)", 4,
                 "  2:\n"
                 "  3: payload = \"\"\n"
                 "> 4: data = json.loads(payload)\n"
                 "  5: print(data)\n");
}

Test (fixture, json_in_helper)
{
  /* json.loads called from a helper: the helper's line is the innermost
     snippet frame. */
  check_fixture ("stdlib-json-helper", 1, "json.decoder.JSONDecodeError",
                 "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)", 5,
                 "  3:\n"
                 "  4: def load(text):\n"
                 "> 5:     return json.loads(text)\n"
                 "  6:\n"
                 "  7:\n");
}

Test (fixture, int_in_function)
{
  check_fixture ("stdlib-int", 1, "ValueError", "invalid literal for int() with base 10: 'x'", 2,
                 "  1: def to_number(s):\n"
                 "> 2:     return int(s)\n"
                 "  3:\n"
                 "  4:\n");
}

Test (fixture, chained_during_handling)
{
  /* "During handling of the above exception": the last one counts. */
  check_fixture ("chained", 1, "RuntimeError", "could not parse 'abc'", 5,
                 "  3:         return int(text)\n"
                 "  4:     except ValueError:\n"
                 "> 5:         raise RuntimeError(\"could not parse \" + repr(text))\n"
                 "  6:\n"
                 "  7:\n");
}

Test (fixture, raise_from)
{
  check_fixture ("raise-from", 1, "ConfigError", "missing setting: path", 9,
                 "   7:         return cfg[\"path\"]\n"
                 "   8:     except KeyError as e:\n"
                 ">  9:         raise ConfigError(\"missing setting: path\") from e\n"
                 "  10:\n"
                 "  11:\n");
}

Test (fixture, chained_stdlib_then_snippet)
{
  /* The first exception ends in json/decoder.py, the second in snippet.py. */
  check_fixture ("exception-in-except-stdlib", 1, "ValueError",
                 "invalid literal for int() with base 10: 'not json'", 8,
                 "   6:         return json.loads(text)\n"
                 "   7:     except json.JSONDecodeError:\n"
                 ">  8:         return int(text)\n"
                 "   9:\n"
                 "  10:\n");
}

Test (fixture, exception_group)
{
  /* Two sub-exceptions without tracebacks: the group itself, at the line
     that raised it. */
  check_fixture ("exception-group", 1, "ExceptionGroup", "bad input (2 sub-exceptions)", 9,
                 "   7:             errors.append(ZeroDivisionError(\"zero\"))\n"
                 "   8:     if errors:\n"
                 ">  9:         raise ExceptionGroup(\"bad input\", errors)\n"
                 "  10:\n"
                 "  11:\n");
}

Test (fixture, exception_group_with_tracebacks)
{
  check_fixture ("exception-group-nested", 1, "ExceptionGroup", "tasks failed (2 sub-exceptions)",
                 14,
                 "  12:         except Exception as e:\n"
                 "  13:             errs.append(e)\n"
                 "> 14:     raise ExceptionGroup(\"tasks failed\", errs)\n"
                 "  15:\n"
                 "  16:\n");
}

Test (fixture, exception_group_nested_groups_chained)
{
  /* A group raised while handling a group, with a group inside: the last
     top-level report is the outer group. */
  check_fixture ("exception-group-nested-groups", 1, "ExceptionGroup", "outer (2 sub-exceptions)",
                 9,
                 "   7:         inner()\n"
                 "   8:     except ExceptionGroup as g:\n"
                 ">  9:         raise ExceptionGroup(\"outer\", [g, TypeError(\"t\")])\n"
                 "  10:\n"
                 "  11:\n");
}

Test (fixture, exception_group_more_than_15)
{
  /* "and 5 more exceptions" */
  check_fixture ("exception-group-many", 1, "ExceptionGroup", "validation (20 sub-exceptions)", 2,
                 "  1: errors = [ValueError(f\"item {i}\") for i in range(20)]\n"
                 "> 2: raise ExceptionGroup(\"validation\", errors)\n");
}

Test (fixture, exception_group_chained_subs)
{
  /* Sub-exceptions with their own "direct cause" chains. */
  check_fixture ("exception-group-chained-sub", 1, "ExceptionGroup",
                 "conversion (2 sub-exceptions)", 14,
                 "  12:     except TypeError as e:\n"
                 "  13:         errs.append(e)\n"
                 "> 14: raise ExceptionGroup(\"conversion\", errs)\n");
}

Test (fixture, taskgroup_single_exception)
{
  /* asyncio.TaskGroup wraps the one failure of a task in a group: the
     wrapped exception and its line are the diagnosis, not the group's
     "async with" line. */
  check_fixture ("taskgroup", 1, "ConnectionError", "fetch 2 failed", 7,
                 "  5:     await asyncio.sleep(0)\n"
                 "  6:     if n == 2:\n"
                 "> 7:         raise ConnectionError(f\"fetch {n} failed\")\n"
                 "  8:     return n\n"
                 "  9:\n");
}

Test (fixture, taskgroup_name_error)
{
  /* So the local healer sees a plain NameError. */
  check_fixture ("taskgroup-name-error", 1, "NameError", "name 'math' is not defined", 6,
                 "  4: async def area(r):\n"
                 "  5:     await asyncio.sleep(0)\n"
                 "> 6:     return math.pi * r * r\n"
                 "  7:\n"
                 "  8:\n");
}

Test (fixture, syntax_error_unclosed_paren)
{
  check_fixture ("syntax-unclosed", 1, "SyntaxError", "'(' was never closed", 3,
                 "  1: import math\n"
                 "  2:\n"
                 "> 3: print(\"root:\", math.sqrt(16)\n"
                 "  4: x = 3\n"
                 "  5: print(x)\n");
}

Test (fixture, syntax_error_unterminated_string)
{
  check_fixture ("unclosed-string", 1, "SyntaxError",
                 "unterminated string literal (detected at line 2)", 2,
                 "  1: x = 1\n"
                 "> 2: msg = \"unterminated\n"
                 "  3: print(msg)\n");
}

Test (fixture, indentation_error)
{
  check_fixture ("indentation", 1, "IndentationError",
                 "unindent does not match any outer indentation level", 4,
                 "  2:     if x > 1:\n"
                 "  3:         return x\n"
                 "> 4:       return 0\n"
                 "  5:\n"
                 "  6:\n");
}

Test (fixture, tab_error)
{
  /* No caret line at all. */
  check_fixture ("tab-error", 1, "TabError", "inconsistent use of tabs and spaces in indentation",
                 4,
                 "  2:     if x:\n"
                 "  3:         y = 1\n"
                 "> 4: \treturn y\n"
                 "  5:\n"
                 "  6:\n");
}

Test (fixture, python2_print)
{
  check_fixture ("py2-print", 1, "SyntaxError",
                 "Missing parentheses in call to 'print'. Did you mean print(...)?", 2,
                 "  1: name = \"world\"\n"
                 "> 2: print \"hello\", name\n");
}

Test (fixture, syntax_error_from_eval)
{
  /* A SyntaxError of code compiled at run time names "<string>": the
     snippet's line is the one that called eval. */
  check_fixture ("eval-syntax", 1, "SyntaxError", "invalid syntax", 3,
                 "  1: expr = \"1 +\"\n"
                 "  2: print(\"evaluating\")\n"
                 "> 3: result = eval(expr)\n"
                 "  4: print(result)\n");
}

Test (fixture, recursion_error)
{
  /* "[Previous line repeated 996 more times]" */
  check_fixture ("recursion", 1, "RecursionError", "maximum recursion depth exceeded", 2,
                 "  1: def fact(n):\n"
                 "> 2:     return n * fact(n - 1)\n"
                 "  3:\n"
                 "  4:\n");
}

Test (fixture, recursion_truncated_by_csrun)
{
  /* Cut in the middle of a frame's source line by csrun's marker; the
     innermost frame (is_odd, line 6) is in the tail. */
  check_fixture ("recursion-truncated", 1, "RecursionError", "maximum recursion depth exceeded", 6,
                 "  4:\n"
                 "  5: def is_odd(n):\n"
                 "> 6:     return False if n == 0 else is_even(n - 1)\n"
                 "  7:\n"
                 "  8:\n");
}

Test (fixture, recursion_truncated_by_real_csrun)
{
  /* Produced by csrun run --max-output=4000: the marker cuts a "File" line. */
  check_fixture ("csrun-deep-recursion", 1, "RecursionError", "maximum recursion depth exceeded", 3,
                 "  1: def walk(node, depth=0):\n"
                 "  2:     children = node.get(\"children\", [])\n"
                 "> 3:     return [walk(node, depth + 1) for child in children]\n"
                 "  4:\n"
                 "  5:\n");
}

Test (fixture, attribute_error_did_you_mean)
{
  check_fixture ("attribute-suggest", 1, "AttributeError",
                 "'list' object has no attribute 'apend'. Did you mean: 'append'?", 3,
                 "  1: items = [3, 1, 2]\n"
                 "  2: items.sort()\n"
                 "> 3: items.apend(4)\n"
                 "  4: print(items)\n");
}

Test (fixture, module_not_found)
{
  check_fixture ("module-not-found", 1, "ModuleNotFoundError", "No module named 'numpyy'", 2,
                 "  1: import sys\n"
                 "> 2: import numpyy as np\n"
                 "  3:\n"
                 "  4: print(np.zeros(3))\n");
}

Test (fixture, multiline_message)
{
  check_fixture ("multiline-message", 1, "ValueError",
                 "validation failed:\nrow 1: empty\nrow 3: empty", 4,
                 "  2:     problems = [f\"row {i}: empty\" for i, r in enumerate(rows) if not r]\n"
                 "  3:     if problems:\n"
                 "> 4:         raise ValueError(\"validation failed:\\n\" + "
                 "\"\\n\".join(problems))\n"
                 "  5:\n"
                 "  6:\n");
}

Test (fixture, message_with_indented_lines_and_note)
{
  check_fixture ("notes-indented", 1, "ValueError",
                 "bad header in data.csv:\n  expected: id,name\n  found: id;name\n"
                 "hint: the file uses ';' as separator",
                 4,
                 "  2:     err = ValueError(\"bad header in \" + path + \":\\n  expected: "
                 "id,name\\n  found: id;name\")\n"
                 "  3:     err.add_note(\"hint: the file uses ';' as separator\")\n"
                 "> 4:     raise err\n"
                 "  5:\n"
                 "  6:\n");
}

Test (fixture, assertion_without_message)
{
  check_fixture ("assert-bare", 1, "AssertionError", "", 2,
                 "  1: def check(total):\n"
                 "> 2:     assert total > 0\n"
                 "  3:\n"
                 "  4:\n");
}

Test (fixture, exception_without_message)
{
  check_fixture ("exception-no-message", 1, "PipelineError", "", 6,
                 "  4:\n"
                 "  5: def step():\n"
                 "> 6:     raise PipelineError()\n"
                 "  7:\n"
                 "  8:\n");
}

Test (fixture, keyboard_interrupt)
{
  check_fixture ("keyboard-interrupt", 1, "KeyboardInterrupt", "", 5,
                 "  3:\n"
                 "  4: print(\"working\")\n"
                 "> 5: os.kill(os.getpid(), signal.SIGINT)\n"
                 "  6: print(\"unreachable\")\n");
}

Test (fixture, memory_error)
{
  check_fixture ("memory-error", 1, "MemoryError", "", 2,
                 "  1: def grow():\n"
                 "> 2:     raise MemoryError\n"
                 "  3:\n"
                 "  4:\n");
}

Test (fixture, caret_and_tilde_markers)
{
  check_fixture ("caret-markers", 1, "TypeError", "'NoneType' object is not subscriptable", 3,
                 "  1: data = {\"a\": {\"b\": None}}\n"
                 "  2: factor = 2\n"
                 "> 3: value = data[\"a\"][\"b\"][\"c\"] * factor\n"
                 "  4: print(value)\n");
}

Test (fixture, warnings_thread_exception_then_error)
{
  /* Warnings, then a thread's traceback, then the main one: the last. */
  check_fixture ("thread-then-error", 1, "KeyError", "'missing'", 15,
                 "  13: t.join()\n"
                 "  14: print(\"done\")\n"
                 "> 15: result = {}[\"missing\"]\n");
}

Test (fixture, sys_exit_with_message)
{
  /* sys.exit("...") prints its message and no traceback. */
  check_fixture ("sys-exit-message", 0, "UnknownError", "fatal: input.csv is empty", 0, NULL);
}

Test (fixture, warnings_only)
{
  check_fixture ("warnings-only", 0, "UnknownError", "partial output", 0, NULL);
}

/* ------------------------------------------------------ cut output */

Test (cut, marker_drops_partial_lines)
{
  /* The head ends inside "line 12": that fragment must not count as a
     frame; the partial first line of the tail is dropped too. */
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 1, in <module>\n"
                     "    f()\n"
                     "  File \"snippet.py\", line 1\n"
                     "[... csrun: 4000 bytes dropped ...]\n"
                     "2, in f\n"
                     "    raise ValueError('v')\n"
                     "ValueError: v\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, "f()\n", &d), 1);
  check_diag (&d, "ValueError", "v", 1, "> 1: f()\n");
  csr_diagnosis_release (&d);
}

Test (cut, header_lost)
{
  /* Only the tail survived: frames without "Traceback" still count. */
  const char *text = "[... csrun: 99 bytes dropped ...]\n"
                     "partial\n"
                     "  File \"snippet.py\", line 2, in g\n"
                     "    return h()\n"
                     "  File \"/usr/lib/python3.11/x.py\", line 9, in h\n"
                     "    raise KeyError(k)\n"
                     "KeyError: 'k'\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, NULL, &d), 1);
  check_diag (&d, "KeyError", "'k'", 2, NULL);
  csr_diagnosis_release (&d);
}

Test (cut, head_ended_at_newline)
{
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 3, in <module>\n"
                     "    a()\n"
                     "\n[... csrun: 10 bytes dropped ...]\n"
                     "  File \"snippet.py\", line 1, in a\n"
                     "  File \"snippet.py\", line 2, in b\n"
                     "    1/0\n"
                     "ZeroDivisionError: division by zero";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, "a\nb\nc\n", &d), 1);
  check_diag (&d, "ZeroDivisionError", "division by zero", 2, "  1: a\n> 2: b\n  3: c\n");
  csr_diagnosis_release (&d);
}

Test (cut, chained_cut_in_the_first)
{
  /* The cut removed the end of the first exception and the start of the
     second: the second is still found. */
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 3, in parse\n"
                     "    return in\n"
                     "[... csrun: 5000 bytes dropped ...]\n"
                     "ng of the above exception, another exception occurred:\n"
                     "\n"
                     "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 5, in parse\n"
                     "RuntimeError: bad\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, NULL, &d), 1);
  check_diag (&d, "RuntimeError", "bad", 5, NULL);
  csr_diagnosis_release (&d);
}

Test (cut, joined_without_marker)
{
  /* Head and tail joined with no marker (csr_bbuf_contents): the seam makes
     one odd line, the diagnosis is the same. */
  size_t len;
  char *text = load ("recursion-truncated", "txt", &len);
  char *code = load ("recursion-truncated", "py", NULL);
  char *m = strstr (text, "\n[... csrun: ");
  cr_assert_not_null (m);
  char *end = strstr (m, "...]\n");
  cr_assert_not_null (end);
  end += 5;
  memmove (m, end, strlen (end) + 1);
  struct csr_diagnosis d;
  cr_assert_eq (csr_classify_traceback (text, strlen (text), code, &d), 1);
  cr_assert_str_eq (d.error_type, "RecursionError");
  cr_assert_str_eq (d.message, "maximum recursion depth exceeded");
  cr_assert_eq (d.line, 6);
  csr_diagnosis_release (&d);
  free (text);
  free (code);
}

/* ------------------------------------------------------ other shapes */

Test (shapes, crlf_and_trailing_output)
{
  /* CRLF line ends; a line printed after the report (by an atexit handler)
     is not part of the message. */
  const char *text = "Traceback (most recent call last):\r\n"
                     "  File \"snippet.py\", line 1, in <module>\r\n"
                     "NameError: name 'x' is not defined\r\n"
                     "\r\n"
                     "cleanup done\r\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, "print(x)", &d), 1);
  check_diag (&d, "NameError", "name 'x' is not defined", 1, "> 1: print(x)\n");
  csr_diagnosis_release (&d);
}

Test (shapes, no_snippet_frame)
{
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"/usr/lib/python3.11/runpy.py\", line 1, in x\n"
                     "OSError: [Errno 5] Input/output error\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, "x = 1\n", &d), 1);
  check_diag (&d, "OSError", "[Errno 5] Input/output error", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (shapes, unicode_type_name)
{
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 2, in <module>\n"
                     "Ошибка: плохо\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, NULL, &d), 1);
  check_diag (&d, "Ошибка", "плохо", 2, NULL);
  csr_diagnosis_release (&d);
}

Test (shapes, huge_message_is_capped)
{
  size_t n = 100000;
  char *text = malloc (n + 200);
  cr_assert_not_null (text);
  int k = sprintf (text, "Traceback (most recent call last):\n  File \"snippet.py\", line 1, in "
                         "<module>\nKeyError: '");
  memset (text + k, 'a', n);
  strcpy (text + k + n, "'\n");
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, NULL, &d), 1);
  cr_assert_str_eq (d.error_type, "KeyError");
  cr_assert_eq (strlen (d.message), 4096);
  cr_assert_eq (d.message[0], '\'');
  cr_assert_eq (d.line, 1);
  csr_diagnosis_release (&d);
  free (text);
}

Test (shapes, huge_stderr_window)
{
  /* 3 MiB of noise before the traceback: only the end is parsed. */
  size_t noise = 3 * 1024 * 1024;
  const char *tb = "Traceback (most recent call last):\n"
                   "  File \"snippet.py\", line 7, in <module>\n"
                   "TypeError: boom\n";
  char *text = malloc (noise + strlen (tb) + 1);
  cr_assert_not_null (text);
  for (size_t i = 0; i < noise; i++)
    text[i] = i % 64 == 63 ? '\n' : 'x';
  strcpy (text + noise, tb);
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, NULL, &d), 1);
  check_diag (&d, "TypeError", "boom", 7, NULL);
  csr_diagnosis_release (&d);
  free (text);
}

/* ---------------------------------------------------- garbage → UnknownError */

Test (garbage, empty)
{
  struct csr_diagnosis d;
  cr_assert_eq (csr_classify_traceback ("", 0, "x = 1\n", &d), 0);
  check_diag (&d, "UnknownError", "", 0, NULL);
  csr_diagnosis_release (&d);
  cr_assert_eq (csr_classify_traceback (NULL, 0, NULL, &d), 0);
  check_diag (&d, "UnknownError", "", 0, NULL);
  csr_diagnosis_release (&d);
  cr_assert_eq (classify_str ("\n\n  \n", NULL, &d), 0);
  check_diag (&d, "UnknownError", "", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (garbage, plain_text)
{
  struct csr_diagnosis d;
  cr_assert_eq (classify_str ("something went wrong\n  details here  \n\n", NULL, &d), 0);
  check_diag (&d, "UnknownError", "details here", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (garbage, half_a_traceback)
{
  /* Header and frames but no exception line (the process died while
     printing): no diagnosis, the last line as message. */
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 5, in <module>\n"
                     "    main()\n"
                     "  File \"snippet.py\", line 2, in main\n"
                     "    return run(";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, "a\nb\n", &d), 0);
  check_diag (&d, "UnknownError", "return run(", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (garbage, complete_then_half)
{
  /* The last report is incomplete: the earlier one is not the answer. */
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 1, in <module>\n"
                     "ValueError: first\n"
                     "\n"
                     "During handling of the above exception, another exception occurred:\n"
                     "\n"
                     "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 3, in <module>\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, NULL, &d), 0);
  check_diag (&d, "UnknownError", "File \"snippet.py\", line 3, in <module>", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (garbage, header_only_and_odd_lines)
{
  const char *cases[] = {
    "Traceback (most recent call last):",
    "Traceback (most recent call last):\n  File \"snippet.py\", line",
    "Traceback (most recent call last):\n  File \"snippet.py\", line 99999999999999999999, in x\n"
    "    y\n",
    "Traceback (most recent call last):\n  File \"\n  File \"snippet.py\", line x\n",
    "Traceback (most recent call last):\nnot an exception line\n9Bad: x\n.Bad: y\na..b: z\n",
    "  + Exception Group Traceback (most recent call last):\n  |\n  +-+\n    +\n    |\n",
    "  + Exception Group Traceback (most recent call last):\n  +-+---------------- 1 ---\n"
    "    | Traceback (most recent call last):\n    +---------------- ... ---\n    | and\n",
    "[... csrun: 12 bytes dropped ...]",
    "[... csrun: 12 bytes dropped ...]\n[... csrun: 1 bytes dropped ...]\n",
    "During handling of the above exception, another exception occurred:\n",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    {
      struct csr_diagnosis d;
      int rc = classify_str (cases[i], "x\n", &d);
      cr_assert_eq (rc, 0, "case %zu found %s", i, d.error_type);
      cr_assert_str_eq (d.error_type, "UnknownError", "case %zu", i);
      cr_assert_not_null (d.message);
      cr_assert_eq (d.line, 0);
      cr_assert_null (d.context);
      csr_diagnosis_release (&d);
    }
}

Test (garbage, frame_with_huge_line_number)
{
  const char *text = "Traceback (most recent call last):\n"
                     "  File \"snippet.py\", line 99999999999999999999, in x\n"
                     "E: m\n";
  struct csr_diagnosis d;
  cr_assert_eq (classify_str (text, "x\n", &d), 1);
  check_diag (&d, "E", "m", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (garbage, binary_junk_never_crashes)
{
  /* Random bytes mixed with pieces of tracebacks and group margins. */
  static const char *pieces[] = {
    "Traceback (most recent call last):\n",
    "  + Exception Group Traceback (most recent call last):\n",
    "  File \"snippet.py\", line 3, in f\n",
    "  File \"snippet.py\", line 2\n",
    "    ^^^^\n",
    "ValueError: x\n",
    "KeyError\n",
    "  | ",
    "    | ",
    "  +-+---------------- 1 ----------------\n",
    "    +---------------- 2 ----------------\n",
    "    +---------------- ... ----------------\n",
    "      +-+",
    "    +------------------------------------\n",
    "\n[... csrun: 77 bytes dropped ...]\n",
    "During handling of the above exception, another exception occurred:\n",
    "\n",
    "\0\0\xff\xfe",
  };
  size_t npieces = sizeof pieces / sizeof *pieces;
  unsigned seed = 12345;
  char *buf = malloc (1 << 16);
  cr_assert_not_null (buf);
  for (int round = 0; round < 2000; round++)
    {
      size_t len = 0, want = (size_t)(rand_r (&seed) % 4000);
      while (len < want)
        {
          if (rand_r (&seed) % 3 == 0)
            {
              const char *p = pieces[rand_r (&seed) % npieces];
              size_t l = p[0] == '\0' ? 4 : strlen (p);
              memcpy (buf + len, p, l);
              len += l;
            }
          else
            buf[len++] = (char)(rand_r (&seed) & 0xff);
        }
      struct csr_diagnosis d;
      int rc = csr_classify_traceback (buf, len, "a\nb\nc\n", &d);
      cr_assert (rc == 0 || rc == 1);
      cr_assert_not_null (d.error_type);
      cr_assert_not_null (d.message);
      if (rc == 0)
        {
          cr_assert_str_eq (d.error_type, "UnknownError");
          cr_assert_eq (d.line, 0);
        }
      cr_assert (d.line >= 0);
      csr_diagnosis_release (&d);
    }
  free (buf);
}

/* ------------------------------------------------------ csr_diagnosis_set */

Test (set, synthetic_without_line)
{
  struct csr_diagnosis d;
  csr_diagnosis_set (&d, "Timeout", "timed out after 5 s", 0, "x = 1\n");
  check_diag (&d, "Timeout", "timed out after 5 s", 0, NULL);
  csr_diagnosis_release (&d);
  csr_diagnosis_set (&d, "SilentFailure", NULL, -3, NULL);
  check_diag (&d, "SilentFailure", "", 0, NULL);
  csr_diagnosis_release (&d);
}

Test (set, copies_strings)
{
  char type[] = "StaticSafetyViolation", msg[] = "os.system is not allowed";
  struct csr_diagnosis d;
  csr_diagnosis_set (&d, type, msg, 2, "import os\nos.system('ls')\n");
  type[0] = msg[0] = 'X';
  check_diag (&d, "StaticSafetyViolation", "os.system is not allowed", 2,
              "  1: import os\n> 2: os.system('ls')\n");
  csr_diagnosis_release (&d);
}

Test (set, context_edges)
{
  struct csr_diagnosis d;
  const char *code = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\nl11";
  csr_diagnosis_set (&d, "E", "m", 1, code);
  check_diag (&d, "E", "m", 1, "> 1: l1\n  2: l2\n  3: l3\n");
  csr_diagnosis_release (&d);
  csr_diagnosis_set (&d, "E", "m", 9, code);
  check_diag (&d, "E", "m", 9, "   7: l7\n   8: l8\n>  9: l9\n  10: l10\n  11: l11\n");
  csr_diagnosis_release (&d);
  /* The last line, without a final newline. */
  csr_diagnosis_set (&d, "E", "m", 11, code);
  check_diag (&d, "E", "m", 11, "   9: l9\n  10: l10\n> 11: l11\n");
  csr_diagnosis_release (&d);
  /* Beyond the code: the line is kept, there is no context. */
  csr_diagnosis_set (&d, "E", "m", 12, code);
  check_diag (&d, "E", "m", 12, NULL);
  csr_diagnosis_release (&d);
  csr_diagnosis_set (&d, "E", "m", 3, "a\nb\n");
  check_diag (&d, "E", "m", 3, NULL);
  csr_diagnosis_release (&d);
  csr_diagnosis_set (&d, "E", "m", 1, "");
  check_diag (&d, "E", "m", 1, NULL);
  csr_diagnosis_release (&d);
  /* CRLF source, an empty line. */
  csr_diagnosis_set (&d, "E", "m", 2, "a = 1\r\n\r\nb\r\n");
  check_diag (&d, "E", "m", 2, "  1: a = 1\n> 2:\n  3: b\n");
  csr_diagnosis_release (&d);
  csr_diagnosis_set (&d, "E", "m", INT_MAX, code);
  check_diag (&d, "E", "m", INT_MAX, NULL);
  csr_diagnosis_release (&d);
}

Test (set, long_line_cut)
{
  char *code = malloc (2001);
  cr_assert_not_null (code);
  memset (code, 'y', 2000);
  code[2000] = '\0';
  struct csr_diagnosis d;
  csr_diagnosis_set (&d, "E", "m", 1, code);
  cr_assert_not_null (d.context);
  cr_assert_eq (strlen (d.context), strlen ("> 1: ") + 500 + strlen (" ...\n"));
  cr_assert (strncmp (d.context, "> 1: yyy", 8) == 0);
  cr_assert_str_eq (d.context + strlen (d.context) - 5, " ...\n");
  csr_diagnosis_release (&d);
  free (code);
}

Test (set, release_is_idempotent)
{
  struct csr_diagnosis d;
  csr_diagnosis_set (&d, "E", "m", 0, NULL);
  csr_diagnosis_release (&d);
  csr_diagnosis_release (&d);
  csr_diagnosis_release (NULL);
}

/* ---------------------------------------------- exit status, network (i14) */

Test (exit, status_without_traceback)
{
  struct csr_diagnosis d;
  cr_assert_eq (csr_classify_exit ("", 0, 3, "import sys; sys.exit(3)\n", &d), 0);
  cr_assert_str_eq (d.error_type, "ExitStatus");
  cr_assert_str_eq (d.message, "exit status 3");
  cr_assert_eq (d.line, 0);
  cr_assert_null (d.context);
  cr_assert_null (d.hint);
  csr_diagnosis_release (&d);
}

Test (exit, status_keeps_last_stderr_line)
{
  static const char err[] = "progress\nbad input\n\n";
  struct csr_diagnosis d;
  cr_assert_eq (csr_classify_exit (err, strlen (err), 1, NULL, &d), 0);
  cr_assert_str_eq (d.error_type, "ExitStatus");
  cr_assert_str_eq (d.message, "exit status 1: bad input");
  csr_diagnosis_release (&d);
}

Test (exit, traceback_wins)
{
  static const char err[] = "Traceback (most recent call last):\n"
                            "  File \"snippet.py\", line 1, in <module>\n"
                            "    x\n"
                            "NameError: name 'x' is not defined\n";
  struct csr_diagnosis d;
  cr_assert_eq (csr_classify_exit (err, strlen (err), 1, "x\n", &d), 1);
  cr_assert_str_eq (d.error_type, "NameError");
  cr_assert_eq (d.line, 1);
  csr_diagnosis_release (&d);
}

Test (exit, status_zero_is_unknown)
{
  struct csr_diagnosis d;
  cr_assert_eq (csr_classify_exit ("", 0, 0, NULL, &d), 0);
  cr_assert_str_eq (d.error_type, "UnknownError");
  csr_diagnosis_release (&d);
}

static bool
is_net (const char *type, const char *msg)
{
  struct csr_diagnosis d;
  csr_diagnosis_set (&d, type, msg, 0, NULL);
  bool r = csr_diagnosis_is_network (&d);
  csr_diagnosis_release (&d);
  return r;
}

Test (network, recognised)
{
  cr_assert (is_net ("socket.gaierror", "[Errno -2] Name or service not known"));
  cr_assert (is_net ("socket.gaierror", "[Errno -3] Temporary failure in name resolution"));
  cr_assert (is_net ("OSError", "[Errno 101] Network is unreachable"));
  cr_assert (
      is_net ("urllib.error.URLError", "<urlopen error [Errno -2] Name or service not known>"));
  cr_assert (is_net ("urllib.error.URLError", "<urlopen error [Errno 113] No route to host>"));
  cr_assert (is_net ("requests.exceptions.ConnectionError",
                     "HTTPSConnectionPool(host='x.org', port=443): Max retries exceeded "
                     "(Caused by NameResolutionError(\"Failed to resolve 'x.org'\"))"));
}

Test (network, not_network)
{
  cr_assert_not (is_net ("ConnectionRefusedError", "[Errno 111] Connection refused"));
  cr_assert_not (is_net ("NameError", "name 'socket' is not defined"));
  cr_assert_not (is_net ("ExitStatus", "exit status 3"));
  cr_assert_not (csr_diagnosis_is_network (NULL));
}
