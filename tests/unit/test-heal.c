/* Unit tests for the local healer (policies/heal.conf and its three rules). */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/heal.h"
#include "util/fs.h"

#include "helpers.h"

/* ------------------------------------------------------------- helpers */

static struct csr_heal_conf conf;
static char rootfs[2048]; /* per-test scratch directory: a fake rootfs */

static void
setup (void)
{
  char *path = test_policy_path ("heal.conf");
  csr_error *err = NULL;
  int rc = csr_heal_conf_load (path, &conf, &err);
  cr_assert_eq (rc, 0, "cannot load %s: %s", path, err ? csr_error_text (err) : "?");
  free (path);
  test_tmpdir_in (rootfs, sizeof rootfs, "test-heal");
}

static void
teardown (void)
{
  csr_heal_conf_release (&conf);
  test_tmpdir_remove (rootfs);
}

TestSuite (heal_conf, .init = setup, .fini = teardown);
TestSuite (missing_import, .init = setup, .fini = teardown);
TestSuite (str_concat, .init = setup, .fini = teardown);
TestSuite (py2_print, .init = setup, .fini = teardown);
TestSuite (heal, .init = setup, .fini = teardown);
TestSuite (did_you_mean, .init = setup, .fini = teardown);
TestSuite (py2_idioms, .init = setup, .fini = teardown);
TestSuite (foreign_method, .init = setup, .fini = teardown);
TestSuite (pasted_code, .init = setup, .fini = teardown);
TestSuite (submodule_import, .init = setup, .fini = teardown);

/* Create ROOTFS/REL (a directory when REL ends with '/', else a file). */
static void
make_in_rootfs (const char *rel)
{
  char path[8192];
  snprintf (path, sizeof path, "%s/%s", rootfs, rel);
  csr_error *err = NULL;
  size_t n = strlen (path);
  if (path[n - 1] == '/')
    {
      cr_assert_eq (csr_mkdir_p (path, 0755, &err), 0);
      return;
    }
  char *slash = strrchr (path, '/');
  *slash = '\0';
  cr_assert_eq (csr_mkdir_p (path, 0755, &err), 0);
  *slash = '/';
  FILE *f = fopen (path, "w");
  cr_assert_not_null (f);
  fclose (f);
}

/* Does DIFF turn A into B?  Checked with patch(1) when there is one. */
static void
check_diff_applies (const char *a, const char *b, const char *diff)
{
  if (system ("command -v patch >/dev/null 2>&1") != 0)
    return;
  char dir[4096], path[8192], cmd[16384];
  snprintf (dir, sizeof dir, "%s/diffcheck", rootfs);
  csr_error *err = NULL;
  cr_assert_eq (csr_mkdir_p (dir, 0755, &err), 0);
  snprintf (path, sizeof path, "%s/snippet.py", dir);
  cr_assert_eq (csr_write_file_atomic (path, a, strlen (a), 0644, &err), 0);
  snprintf (path, sizeof path, "%s/fix.diff", dir);
  cr_assert_eq (csr_write_file_atomic (path, diff, strlen (diff), 0644, &err), 0);
  snprintf (cmd, sizeof cmd, "cd '%s' && patch -s -p1 < fix.diff >/dev/null 2>&1", dir);
  cr_assert_eq (system (cmd), 0, "patch rejected the diff:\n%s", diff);
  char *got = NULL;
  size_t len = 0;
  snprintf (path, sizeof path, "%s/snippet.py", dir);
  cr_assert_eq (csr_read_file (path, 1 << 20, &got, &len, &err), 0);
  cr_assert_str_eq (got, b, "the diff does not give the patched code");
  free (got);
  /* The patched code is Python 3 (when there is a python3 to ask). */
  if (system ("command -v python3 >/dev/null 2>&1") == 0)
    {
      snprintf (cmd, sizeof cmd,
                "python3 -I -c 'import sys; compile(open(sys.argv[1], \"rb\").read(), "
                "\"snippet.py\", \"exec\")' '%s'",
                path);
      cr_assert_eq (system (cmd), 0, "the patched code does not compile:\n%s", b);
    }
  cr_assert_eq (csr_rm_rf (dir, &err), 0);
}

struct undef
{
  const char *name, *usage, *suggest;
};

/* Heal CODE after a failure TYPE: MSG at LINE (TYPE NULL: no diagnosis),
 * with the gate's undefined names UNDEF (NULL-terminated, may be NULL).
 * WANT NULL: no patch expected. */
static void
check_full (const char *code, const char *type, const char *msg, int line,
            const struct undef *undef, const char *root, const char *want, const char *rules)
{
  struct csr_diagnosis d = { (char *)type, (char *)msg, line, NULL, NULL };
  struct csr_undefined_name names[16];
  struct csr_gate_verdict v;
  memset (&v, 0, sizeof v);
  /* the gate blocks on the names the healer knows (and on its suggestions) */
  v.outcome = CSR_GATE_BLOCKED;
  v.undefined = names;
  for (size_t i = 0; undef && undef[i].name; i++)
    {
      names[i] = (struct csr_undefined_name){ (char *)undef[i].name, 1, (char *)undef[i].usage,
                                              (char *)undef[i].suggest };
      v.n_undefined++;
    }
  struct csr_patch p;
  csr_error *err = NULL;
  int rc = csr_heal_local (code, type ? &d : NULL, undef ? &v : NULL, &conf, root, &p, &err);
  cr_assert_geq (rc, 0, "error: %s", err ? csr_error_text (err) : "?");
  if (want == NULL)
    {
      cr_assert_eq (rc, 0, "unexpected patch (%s):\n%s", p.rules, p.code);
      cr_assert_null (p.code);
      return;
    }
  cr_assert_eq (rc, 1, "no patch for:\n%s", code);
  cr_assert_str_eq (p.code, want, "got:\n%s\nwanted:\n%s", p.code, want);
  cr_assert_str_eq (p.rules, rules);
  cr_assert_str_eq (p.source, "local");
  cr_assert_not_null (p.diff);
  cr_assert (strncmp (p.diff, "--- a/snippet.py\n+++ b/snippet.py\n@@ ", 37) == 0, "diff: %s",
             p.diff);
  check_diff_applies (code, want, p.diff);
  csr_patch_release (&p);
}

static void
check (const char *code, const char *type, const char *msg, int line, const char *want,
       const char *rules)
{
  check_full (code, type, msg, line, NULL, NULL, want, rules);
}

#define NAMEERR(n) "name '" n "' is not defined"
#define CONCAT(t) "can only concatenate str (not \"" t "\") to str"
#define OPERAND(t) "unsupported operand type(s) for +: '" t "' and 'str'"
#define PRINT_MSG "Missing parentheses in call to 'print'. Did you mean print(...)?"

/* ---------------------------------------------------------- heal.conf */

Test (heal_conf, default_table_loads)
{
  cr_assert_gt (conf.n_imports, 100);
  bool np = false, dt_module = false, dt_class = false;
  for (size_t i = 0; i < conf.n_imports; i++)
    {
      const struct csr_heal_import *im = &conf.imports[i];
      cr_assert (strcmp (im->name, "subprocess") != 0 && strcmp (im->name, "ctypes") != 0
                     && strcmp (im->name, "socket") != 0,
                 "%s must not be auto-imported", im->name);
      if (strcmp (im->name, "np") == 0)
        {
          np = true;
          cr_assert_str_eq (im->line, "import numpy as np");
          cr_assert_str_eq (im->module, "numpy");
        }
      if (strcmp (im->name, "datetime") == 0 && strcmp (im->line, "import datetime") == 0)
        {
          dt_module = true;
          cr_assert_eq (im->uses, CSR_HEAL_USE_ATTRIBUTE);
          cr_assert_gt (im->n_attrs, 3);
        }
      if (strcmp (im->name, "datetime") == 0
          && strcmp (im->line, "from datetime import datetime") == 0)
        {
          dt_class = true;
          cr_assert_gt (im->n_not_attrs, 3);
        }
    }
  cr_assert (np && dt_module && dt_class);
}

Test (heal_conf, syntax)
{
  const char *text = "# comment\n"
                     "\n"
                     "  math   import math   # trailing comment\n"
                     "Counter\tfrom collections import Counter\n"
                     "np  import numpy as np  [module=numpy use=attribute,call]\n"
                     "dt  import datetime as dt  [attr=date,datetime not-attr=now]\n"
                     "P   from pathlib import (Path as P)\n";
  struct csr_heal_conf c;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_conf_parse (text, strlen (text), &c, &err), 0, "%s",
                err ? csr_error_text (err) : "");
  cr_assert_eq (c.n_imports, 5);
  cr_assert_str_eq (c.imports[0].name, "math");
  cr_assert_str_eq (c.imports[0].line, "import math");
  cr_assert_null (c.imports[0].module);
  cr_assert_eq (c.imports[0].uses, 0);
  cr_assert_str_eq (c.imports[1].line, "from collections import Counter");
  cr_assert_str_eq (c.imports[2].line, "import numpy as np");
  cr_assert_str_eq (c.imports[2].module, "numpy");
  cr_assert_eq (c.imports[2].uses, CSR_HEAL_USE_ATTRIBUTE | CSR_HEAL_USE_CALL);
  cr_assert_eq (c.imports[3].n_attrs, 2);
  cr_assert_str_eq (c.imports[3].attrs[1], "datetime");
  cr_assert_eq (c.imports[3].n_not_attrs, 1);
  cr_assert_str_eq (c.imports[3].not_attrs[0], "now");
  cr_assert_str_eq (c.imports[4].line, "from pathlib import (Path as P)");
  csr_heal_conf_release (&c);
  cr_assert_eq (c.n_imports, 0);
}

static void
check_conf_error (const char *text, const char *want)
{
  struct csr_heal_conf c;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_conf_parse (text, strlen (text), &c, &err), -1, "accepted: %s", text);
  cr_assert_not_null (err);
  cr_assert (strstr (csr_error_text (err), want) != NULL, "error '%s' lacks '%s'",
             csr_error_text (err), want);
  csr_error_free (err);
  cr_assert_eq (c.n_imports, 0);
}

Test (heal_conf, errors_name_the_line)
{
  check_conf_error ("math import math\n\nfoo import math\n", "line 3");
  check_conf_error ("math import math\nfoo import math\n", "binds NAME");
  check_conf_error ("1x import x\n", "line 1: NAME");
  check_conf_error ("math\n", "missing IMPORT-LINE");
  check_conf_error ("math print(1)\n", "binds NAME");
  check_conf_error ("math import math; import os\n", "character");
  check_conf_error ("math import math [color=red]\n", "unknown option");
  check_conf_error ("math import math [use=often]\n", "use=");
  check_conf_error ("math import math [module=a/b]\n", "module=");
  check_conf_error ("math import math [attr=]\n", "attr=");
  check_conf_error ("x = 1\n", "line 1");
}

Test (heal_conf, load_missing_file)
{
  struct csr_heal_conf c;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_conf_load ("/nonexistent/heal.conf", &c, &err), -1);
  cr_assert (strstr (csr_error_text (err), "/nonexistent/heal.conf") != NULL);
  csr_error_free (err);
}

/* ------------------------------------------------------ missing-import */

Test (missing_import, module_from_nameerror)
{
  const char *code = "print(math.sqrt(16))\n";
  struct csr_diagnosis d = { "NameError", NAMEERR ("math"), 1, NULL, NULL };
  struct csr_patch p;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_local (code, &d, NULL, &conf, NULL, &p, &err), 1);
  cr_assert_str_eq (p.code, "import math\nprint(math.sqrt(16))\n");
  cr_assert_str_eq (p.rules, "missing-import");
  cr_assert_str_eq (p.diff, "--- a/snippet.py\n"
                            "+++ b/snippet.py\n"
                            "@@ -1 +1,2 @@\n"
                            "+import math\n"
                            " print(math.sqrt(16))\n");
  csr_patch_release (&p);
}

Test (missing_import, did_you_mean_suffix)
{
  check ("x = json.dumps({})\nprint(x)\n", "NameError", NAMEERR ("json") ". Did you mean: 'JSON'?",
         1, "import json\nx = json.dumps({})\nprint(x)\n", "missing-import");
  check ("c = Counter('abc')\n", "NameError", NAMEERR ("Counter") ". Did you mean: 'counter'?", 1,
         "from collections import Counter\nc = Counter('abc')\n", "missing-import");
}

Test (missing_import, names_that_live_in_modules)
{
  check ("d = defaultdict(list)\n", "NameError", NAMEERR ("defaultdict"), 1,
         "from collections import defaultdict\nd = defaultdict(list)\n", "missing-import");
  check ("p = Path('/tmp') / 'x'\n", "NameError", NAMEERR ("Path"), 1,
         "from pathlib import Path\np = Path('/tmp') / 'x'\n", "missing-import");
  check ("def f(x: List[int]) -> Optional[int]:\n    return None\n", "NameError", NAMEERR ("List"),
         1, "from typing import List\ndef f(x: List[int]) -> Optional[int]:\n    return None\n",
         "missing-import");
  check ("total = reduce(lambda a, b: a + b, [1, 2, 3])\n", "NameError", NAMEERR ("reduce"), 1,
         "from functools import reduce\ntotal = reduce(lambda a, b: a + b, [1, 2, 3])\n",
         "missing-import");
  check ("@dataclass\nclass P:\n    x: int\n", "NameError", NAMEERR ("dataclass"), 1,
         "from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n", "missing-import");
  check ("print(sqrt(2) * pi)\n", "NameError", NAMEERR ("sqrt"), 1,
         "from math import sqrt\nprint(sqrt(2) * pi)\n", "missing-import");
  check ("print(Decimal('0.1') + Fraction(1, 3))\n", "NameError", NAMEERR ("Decimal"), 1,
         "from decimal import Decimal\nprint(Decimal('0.1') + Fraction(1, 3))\n", "missing-import");
}

Test (missing_import, all_names_in_one_patch_in_table_order)
{
  const char *code = "import sys\n"
                     "\n"
                     "words = Counter(sys.argv)\n"
                     "groups = defaultdict(list)\n"
                     "print(math.floor(2.5), foo, np.zeros(3))\n";
  struct undef u[] = { { "defaultdict", "call", NULL }, { "foo", "name", NULL },
                       { "math", "attribute", NULL },   { "np", "attribute", NULL },
                       { "Counter", "call", NULL },     { NULL, NULL, NULL } };
  /* np: no numpy in the (missing) rootfs; foo: no entry, never a placeholder. */
  check_full (code, "NameError", NAMEERR ("Counter"), 3, u, NULL,
              "import math\n"
              "from collections import Counter\n"
              "from collections import defaultdict\n"
              "import sys\n"
              "\n"
              "words = Counter(sys.argv)\n"
              "groups = defaultdict(list)\n"
              "print(math.floor(2.5), foo, np.zeros(3))\n",
              "missing-import");
}

Test (missing_import, no_entry_no_patch)
{
  check ("print(undefined_thing)\n", "NameError", NAMEERR ("undefined_thing"), 1, NULL, NULL);
  struct undef u[]
      = { { "helper", "call", NULL }, { "config", "attribute", NULL }, { NULL, NULL, NULL } };
  check_full ("helper(config.x)\n", "NameError", NAMEERR ("helper"), 1, u, NULL, NULL, NULL);
  /* e is too ambiguous to be math.e; a bare undefined "string" is a bug. */
  check ("print(e)\n", "NameError", NAMEERR ("e"), 1, NULL, NULL);
  check ("print(string)\n", "NameError", NAMEERR ("string"), 1, NULL, NULL);
  check ("print(string.ascii_lowercase)\n", "NameError", NAMEERR ("string"), 1,
         "import string\nprint(string.ascii_lowercase)\n", "missing-import");
  /* Other diagnoses do nothing without the gate's list. */
  check ("print(math.pi)\n", "ZeroDivisionError", "division by zero", 1, NULL, NULL);
  check ("print(math.pi)\n", NULL, NULL, 0, NULL, NULL);
}

Test (missing_import, never_duplicated)
{
  /* Already imported at the top level (the NameError comes from elsewhere). */
  check ("import math\nprint(math.pi)\n", "NameError", NAMEERR ("math"), 2, NULL, NULL);
  check ("import os, sys as system, math\nprint(math.pi)\n", "NameError", NAMEERR ("math"), 2, NULL,
         NULL);
  check ("from collections import (\n    Counter,\n    deque,\n)\nx = Counter()\n", "NameError",
         NAMEERR ("Counter"), 5, NULL, NULL);
  check ("print(math.pi)\nimport math\n", "NameError", NAMEERR ("math"), 1, NULL, NULL);
  /* An import inside a function does not bind the global name. */
  check ("def f():\n    import math\n    return 1\nprint(math.pi)\n", "NameError", NAMEERR ("math"),
         4, "import math\ndef f():\n    import math\n    return 1\nprint(math.pi)\n",
         "missing-import");
  /* Bound under another name: the table's line is still needed. */
  check ("from collections import Counter as C\nx = Counter()\n", "NameError", NAMEERR ("Counter"),
         2,
         "from collections import Counter\nfrom collections import Counter as C\nx = Counter()\n",
         "missing-import");
  /* The gate and the traceback name the same missing module: one line. */
  struct undef u[]
      = { { "math", "attribute", NULL }, { "math", "attribute", NULL }, { NULL, NULL, NULL } };
  check_full ("print(math.pi)\n", "NameError", NAMEERR ("math"), 1, u, NULL,
              "import math\nprint(math.pi)\n", "missing-import");
}

Test (missing_import, datetime_module_or_class)
{
  check ("print(datetime.datetime.now())\n", "NameError", NAMEERR ("datetime"), 1,
         "import datetime\nprint(datetime.datetime.now())\n", "missing-import");
  check ("d = datetime.date(2020, 1, 1) + datetime.timedelta(days=1)\n", "NameError",
         NAMEERR ("datetime"), 1,
         "import datetime\nd = datetime.date(2020, 1, 1) + datetime.timedelta(days=1)\n",
         "missing-import");
  check ("print(datetime.now().isoformat())\n", "NameError", NAMEERR ("datetime"), 1,
         "from datetime import datetime\nprint(datetime.now().isoformat())\n", "missing-import");
  check ("d = datetime(2020, 1, 1)\nprint(d.date())\n", "NameError", NAMEERR ("datetime"), 1,
         "from datetime import datetime\nd = datetime(2020, 1, 1)\nprint(d.date())\n",
         "missing-import");
  check ("ok = isinstance(x, datetime)\n", "NameError", NAMEERR ("datetime"), 1,
         "from datetime import datetime\nok = isinstance(x, datetime)\n", "missing-import");
  check ("t = datetime.strptime('2020', '%Y')\n", "NameError", NAMEERR ("datetime"), 1,
         "from datetime import datetime\nt = datetime.strptime('2020', '%Y')\n", "missing-import");
  /* Inside an f-string. */
  check ("print(f\"{datetime.datetime.now():%Y}\")\n", "NameError", NAMEERR ("datetime"), 1,
         "import datetime\nprint(f\"{datetime.datetime.now():%Y}\")\n", "missing-import");
  /* The word in a string or a comment, or an attribute of something else,
   * does not count. */
  check ("# datetime.datetime\nx = 'datetime.date'\ny = obj.datetime.date\nz = datetime.now()\n",
         "NameError", NAMEERR ("datetime"), 4,
         "from datetime import datetime\n# datetime.datetime\nx = 'datetime.date'\n"
         "y = obj.datetime.date\nz = datetime.now()\n",
         "missing-import");
  /* An annotation is a use; a keyword argument is not. */
  check ("start: datetime = datetime.now()\nf(datetime=1)\n", "NameError", NAMEERR ("datetime"), 1,
         "from datetime import datetime\nstart: datetime = datetime.now()\nf(datetime=1)\n",
         "missing-import");
  /* Both uses: no import makes this work. */
  check ("a = datetime.date.today()\nb = datetime.now()\n", "NameError", NAMEERR ("datetime"), 1,
         NULL, NULL);
  /* date / timedelta as classes. */
  check ("print(date.today() - timedelta(days=1))\n", "NameError", NAMEERR ("date"), 1,
         "from datetime import date\nprint(date.today() - timedelta(days=1))\n", "missing-import");
}

Test (missing_import, usage_decides)
{
  check ("time.sleep(0.1)\n", "NameError", NAMEERR ("time"), 1, "import time\ntime.sleep(0.1)\n",
         "missing-import");
  check ("t = time(12, 30)\n", "NameError", NAMEERR ("time"), 1, NULL, NULL);
  check ("print(random.randint(1, 6))\n", "NameError", NAMEERR ("random"), 1,
         "import random\nprint(random.randint(1, 6))\n", "missing-import");
  check ("print(random())\n", "NameError", NAMEERR ("random"), 1,
         "from random import random\nprint(random())\n", "missing-import");
  check ("pprint({'a': 1})\n", "NameError", NAMEERR ("pprint"), 1,
         "from pprint import pprint\npprint({'a': 1})\n", "missing-import");
  check ("pprint.pprint({'a': 1})\n", "NameError", NAMEERR ("pprint"), 1,
         "import pprint\npprint.pprint({'a': 1})\n", "missing-import");
  check ("print(log(8, 2))\n", "NameError", NAMEERR ("log"), 1,
         "from math import log\nprint(log(8, 2))\n", "missing-import");
  check ("log.info('x')\n", "NameError", NAMEERR ("log"), 1, NULL, NULL);
  check ("x = choice([1, 2])\n", "NameError", NAMEERR ("choice"), 1,
         "from random import choice\nx = choice([1, 2])\n", "missing-import");
  check ("print(choice)\n", "NameError", NAMEERR ("choice"), 1, NULL, NULL);
  /* Keyword arguments and bindings are not uses. */
  check ("print(sqrt(x), f(sqrt=1))\n", "NameError", NAMEERR ("sqrt"), 1,
         "from math import sqrt\nprint(sqrt(x), f(sqrt=1))\n", "missing-import");
  /* Only the gate knows how it is used (the scan sees nothing). */
  struct undef u[] = { { "math", "attribute", NULL }, { NULL, NULL, NULL } };
  check_full ("exec_later = 1\n", NULL, NULL, 0, u, NULL, "import math\nexec_later = 1\n",
              "missing-import");
  struct undef w[] = { { "datetime", "attribute", NULL }, { NULL, NULL, NULL } };
  check_full ("pass\n", NULL, NULL, 0, w, NULL, NULL, NULL);
}

Test (missing_import, third_party_only_when_in_rootfs)
{
  const char *code = "a = np.array([1, 2])\ndf = pd.DataFrame()\nplt.plot(a)\n";
  struct undef u[] = { { "np", "attribute", NULL },
                       { "pd", "attribute", NULL },
                       { "plt", "attribute", NULL },
                       { NULL, NULL, NULL } };
  check_full (code, NULL, NULL, 0, u, NULL, NULL, NULL);
  check_full (code, NULL, NULL, 0, u, rootfs, NULL, NULL);
  /* Something else with the name is not the module. */
  make_in_rootfs ("usr/lib/python3/dist-packages/numpy-1.26.egg-info");
  make_in_rootfs ("usr/lib/python3/dist-packages/numpyx/");
  check_full (code, NULL, NULL, 0, u, rootfs, NULL, NULL);
}

Test (missing_import, third_party_paths)
{
  const char *code = "a = np.array([1, 2])\ndf = pd.DataFrame()\nplt.plot(a)\n";
  struct undef u[] = { { "np", "attribute", NULL },
                       { "pd", "attribute", NULL },
                       { "plt", "attribute", NULL },
                       { NULL, NULL, NULL } };
  make_in_rootfs ("usr/lib/python3/dist-packages/numpy/");
  check_full (code, "NameError", NAMEERR ("np"), 1, u, rootfs,
              "import numpy as np\na = np.array([1, 2])\ndf = pd.DataFrame()\nplt.plot(a)\n",
              "missing-import");
  make_in_rootfs ("usr/local/lib/python3.11/dist-packages/pandas/__init__.py");
  make_in_rootfs ("usr/lib/python3.11/site-packages/matplotlib.cpython-311-x86_64-linux-gnu.so");
  check_full (code, "NameError", NAMEERR ("np"), 1, u, rootfs,
              "import numpy as np\nimport pandas as pd\nimport matplotlib.pyplot as plt\n"
              "a = np.array([1, 2])\ndf = pd.DataFrame()\nplt.plot(a)\n",
              "missing-import");
  /* A single-file module in the standard library directory. */
  make_in_rootfs ("usr/lib/python3.11/yaml.py");
  check ("print(yaml.safe_load('a: 1'))\n", "NameError", NAMEERR ("yaml"), 1, NULL, NULL);
  check_full ("print(yaml.safe_load('a: 1'))\n", "NameError", NAMEERR ("yaml"), 1, NULL, rootfs,
              "import yaml\nprint(yaml.safe_load('a: 1'))\n", "missing-import");
}

Test (missing_import, placement)
{
  /* shebang + encoding + docstring + __future__ */
  check ("#!/usr/bin/env python3\n"
         "# -*- coding: utf-8 -*-\n"
         "\"\"\"Module doc.\n"
         "\n"
         "More.\"\"\"\n"
         "from __future__ import annotations\n"
         "from __future__ import (division,\n"
         "                        print_function)\n"
         "\n"
         "print(math.pi)\n",
         "NameError", NAMEERR ("math"), 10,
         "#!/usr/bin/env python3\n"
         "# -*- coding: utf-8 -*-\n"
         "\"\"\"Module doc.\n"
         "\n"
         "More.\"\"\"\n"
         "from __future__ import annotations\n"
         "from __future__ import (division,\n"
         "                        print_function)\n"
         "import math\n"
         "\n"
         "print(math.pi)\n",
         "missing-import");
  /* A docstring alone. */
  check ("'''Doc.'''\nprint(math.pi)\n", "NameError", NAMEERR ("math"), 2,
         "'''Doc.'''\nimport math\nprint(math.pi)\n", "missing-import");
  /* A header comment block ends at a blank line; a comment right above the
   * first statement stays with it. */
  check ("# Copyright me\n# License: MIT\n\n# the answer\nprint(math.pi)\n", "NameError",
         NAMEERR ("math"), 5,
         "# Copyright me\n# License: MIT\n\nimport math\n# the answer\nprint(math.pi)\n",
         "missing-import");
  check ("# the answer\nprint(math.pi)\n", "NameError", NAMEERR ("math"), 2,
         "import math\n# the answer\nprint(math.pi)\n", "missing-import");
  /* Shebang, then code. */
  check ("#!/usr/bin/python3\nprint(math.pi)\n", "NameError", NAMEERR ("math"), 2,
         "#!/usr/bin/python3\nimport math\nprint(math.pi)\n", "missing-import");
  /* An f-string first is not a docstring. */
  check ("f'{math.pi}'\n", "NameError", NAMEERR ("math"), 1, "import math\nf'{math.pi}'\n",
         "missing-import");
  /* No newline at the end of the docstring line. */
  struct undef u[] = { { "math", "attribute", NULL }, { NULL, NULL, NULL } };
  check_full ("\"\"\"Doc.\"\"\"", NULL, NULL, 0, u, NULL, "\"\"\"Doc.\"\"\"\nimport math\n",
              "missing-import");
  /* The rest of the file stays byte-identical (tabs, CRLF, trailing spaces). */
  check ("x = 1  \r\nif x:\n\tprint(math.pi)   # tab\n", "NameError", NAMEERR ("math"), 3,
         "import math\nx = 1  \r\nif x:\n\tprint(math.pi)   # tab\n", "missing-import");
}

/* ----------------------------------------------------------- str-concat */

Test (str_concat, literal_int)
{
  check ("print(\"Result: \" + 42)\n", "TypeError", CONCAT ("int"), 1,
         "print(\"Result: \" + str(42))\n", "str-concat");
  check ("print('pi=' + 3.14)\n", "TypeError", CONCAT ("float"), 1, "print('pi=' + str(3.14))\n",
         "str-concat");
}

Test (str_concat, chains)
{
  check ("n = 3\nprint(\"n=\" + n + \" items\")\n", "TypeError", CONCAT ("int"), 2,
         "n = 3\nprint(\"n=\" + str(n) + \" items\")\n", "str-concat");
  /* Every non-str operand after the first str: str() of a str is itself. */
  check ("msg = \"Total: \" + obj.count * 2 + \"/\" + items[0] + str(x) + f(y, z)\n", "TypeError",
         CONCAT ("int"), 1,
         "msg = \"Total: \" + str(obj.count * 2) + \"/\" + str(items[0]) + str(x) + str(f(y, "
         "z))\n",
         "str-concat");
  /* Operands before the first str are not concatenated to a str. */
  check ("s = name + \": \" + count\n", "TypeError", CONCAT ("int"), 1,
         "s = name + \": \" + str(count)\n", "str-concat");
  /* f-strings and "..." % x are strings. */
  check ("s = f\"{a}\" + b + \"%d\" % c\n", "TypeError", CONCAT ("int"), 1,
         "s = f\"{a}\" + str(b) + \"%d\" % c\n", "str-concat");
}

Test (str_concat, int_plus_str)
{
  check ("print(f(x) + \"s\")\n", "TypeError", OPERAND ("int"), 1, "print(str(f(x)) + \"s\")\n",
         "str-concat");
  check ("label = d[\"k\"].total + ' points'\n", "TypeError", OPERAND ("float"), 1,
         "label = str(d[\"k\"].total) + ' points'\n", "str-concat");
  check ("print(count + 1 + \" items\")\n", "TypeError", OPERAND ("int"), 1,
         "print(str(count + 1) + \" items\")\n", "str-concat");
  /* a + b + "s": which '+' failed is a guess. */
  check ("print(a + b + \" items\")\n", "TypeError", OPERAND ("int"), 1, NULL, NULL);
}

Test (str_concat, plus_inside_strings_untouched)
{
  check ("print(\"a + b = \" + a + ' (+1)')\n", "TypeError", CONCAT ("int"), 1,
         "print(\"a + b = \" + str(a) + ' (+1)')\n", "str-concat");
  check ("x = \"1 + \" + 1  # \"2\" + 2\n", "TypeError", CONCAT ("int"), 1,
         "x = \"1 + \" + str(1)  # \"2\" + 2\n", "str-concat");
}

Test (str_concat, augmented_and_multiline)
{
  check ("s = ''\nfor i in range(3):\n    s += i\n", "TypeError", CONCAT ("int"), 3,
         "s = ''\nfor i in range(3):\n    s += str(i)\n", "str-concat");
  check ("s += n * 2; t = 1\n", "TypeError", CONCAT ("int"), 1, "s += str(n * 2); t = 1\n",
         "str-concat");
  check ("msg = (\"Count: \" +\n       n)\n", "TypeError", CONCAT ("int"), 2,
         "msg = (\"Count: \" +\n       str(n))\n", "str-concat");
  check ("def f(n):\n    return \"n is \" + n\n", "TypeError", CONCAT ("int"), 2,
         "def f(n):\n    return \"n is \" + str(n)\n", "str-concat");
}

Test (str_concat, refuses)
{
  /* No str on the line. */
  check ("total = a + b\n", "TypeError", CONCAT ("int"), 1, NULL, NULL);
  /* Wrong line. */
  check ("x = 1\nprint('a' + x)\n", "TypeError", CONCAT ("int"), 1, NULL, NULL);
  /* Bytes. */
  check ("x = b'a' + n\n", "TypeError", CONCAT ("int"), 1, NULL, NULL);
  /* Already str(). */
  check ("print('a' + str(n))\n", "TypeError", CONCAT ("int"), 1, NULL, NULL);
  /* Other messages and types. */
  check ("print('a' + n)\n", "TypeError", "unsupported operand type(s) for -: 'str' and 'int'", 1,
         NULL, NULL);
  check ("print('a' + n)\n", "ValueError", CONCAT ("int"), 1, NULL, NULL);
  check ("print('a' + n)\n", "TypeError", CONCAT ("int"), 0, NULL, NULL);
  check ("print('a' - n + 1)\n", "TypeError", CONCAT ("int"), 1, NULL, NULL);
  /* int += str can't be fixed by wrapping. */
  check ("n += 's'\n", "TypeError", "unsupported operand type(s) for +=: 'int' and 'str'", 1, NULL,
         NULL);
}

/* ------------------------------------------------------------ py2-print */

Test (py2_print, statements)
{
  check ("print \"hello\"\n", "SyntaxError", PRINT_MSG, 1, "print(\"hello\")\n", "py2-print");
  check ("print x, y\n", "SyntaxError", PRINT_MSG, 1, "print(x, y)\n", "py2-print");
  check ("print \"a=%s\" % b\n", "SyntaxError", PRINT_MSG, 1, "print(\"a=%s\" % b)\n", "py2-print");
  check ("print x,\n", "SyntaxError", PRINT_MSG, 1, "print(x, end=\" \")\n", "py2-print");
  check ("import sys\nprint >>sys.stderr, \"oops\", 1\n", "SyntaxError", PRINT_MSG, 2,
         "import sys\nprint(\"oops\", 1, file=sys.stderr)\n", "py2-print");
  check ("print >>f\n", "SyntaxError", PRINT_MSG, 1, "print(file=f)\n", "py2-print");
}

Test (py2_print, whole_file_in_one_patch)
{
  const char *code = "import sys\n"
                     "def main(names):\n"
                     "    print \"names:\"  # header\n"
                     "    for n in names: print n,\n"
                     "    print\n"
                     "    doc = \"\"\"\n"
                     "print this stays\n"
                     "    \"\"\"\n"
                     "    print(\"ok\")\n"
                     "    print (\"also ok\")\n"
                     "    x = 1; print x\n"
                     "    print = 3\n"
                     "    print \"multi\", \\\n"
                     "        \"line\"\n"
                     "main(sys.argv)\n";
  const char *want = "import sys\n"
                     "def main(names):\n"
                     "    print(\"names:\")  # header\n"
                     "    for n in names: print(n, end=\" \")\n"
                     "    print()\n"
                     "    doc = \"\"\"\n"
                     "print this stays\n"
                     "    \"\"\"\n"
                     "    print(\"ok\")\n"
                     "    print (\"also ok\")\n"
                     "    x = 1; print(x)\n"
                     "    print = 3\n"
                     "    print(\"multi\", \\\n"
                     "        \"line\")\n"
                     "main(sys.argv)\n";
  check (code, "SyntaxError", PRINT_MSG, 3, want, "py2-print");
}

Test (py2_print, triggers)
{
  /* Only after that SyntaxError (or the gate's), or the >> TypeError. */
  check ("print x\n", "NameError", NAMEERR ("x"), 1, NULL, NULL);
  check ("print x\n", NULL, NULL, 0, NULL, NULL);
  check ("import sys\nprint >>sys.stderr, 'x'\n", "TypeError",
         "unsupported operand type(s) for >>: 'builtin_function_or_method' and "
         "'_io.TextIOWrapper'. Did you mean \"print(<message>, file=<output_stream>)\"?",
         2, "import sys\nprint('x', file=sys.stderr)\n", "py2-print");
  struct csr_gate_verdict v;
  memset (&v, 0, sizeof v);
  v.outcome = CSR_GATE_SYNTAX_ERROR;
  v.line = 1;
  v.message = (char *)PRINT_MSG;
  struct csr_patch p;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_local ("print 'x'\n", NULL, &v, &conf, NULL, &p, &err), 1);
  cr_assert_str_eq (p.code, "print('x')\n");
  csr_patch_release (&p);
  /* Nothing to rewrite. */
  check ("print('x')\n", "SyntaxError", PRINT_MSG, 1, NULL, NULL);
}

/* ----------------------------------------------------------- combined */

Test (heal, rules_together)
{
  /* The gate's undefined names and a str-concat TypeError: one patch. */
  struct undef u[] = { { "math", "attribute", NULL }, { NULL, NULL, NULL } };
  check_full ("\"\"\"Doc.\"\"\"\nr = math.sqrt(16)\nprint(\"r=\" + r)\n", "TypeError",
              CONCAT ("float"), 3, u, NULL,
              "\"\"\"Doc.\"\"\"\nimport math\nr = math.sqrt(16)\nprint(\"r=\" + str(r))\n",
              "missing-import,str-concat");
}

Test (heal, null_inputs)
{
  struct csr_patch p;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_local ("x = 1\n", NULL, NULL, NULL, NULL, &p, &err), 0);
  cr_assert_eq (csr_heal_local ("", NULL, NULL, &conf, NULL, &p, &err), 0);
  cr_assert_eq (csr_heal_local (NULL, NULL, NULL, &conf, NULL, &p, &err), 0);
  csr_patch_release (&p);
  csr_patch_release (NULL);
  cr_assert_null (err);
}

/* ------------------------------------------------------- did-you-mean */

/* CODE failed with TYPE: MSG at LINE; the gate's verdict (a syntax error when
 * SYNTAX) lists UNDEF. */
static void
check_v (const char *code, const char *type, const char *msg, int line, const struct undef *undef,
         bool syntax, const char *want, const char *rules)
{
  if (!syntax)
    {
      check_full (code, type, msg, line, undef, NULL, want, rules);
      return;
    }
  struct csr_diagnosis d = { (char *)type, (char *)msg, line, NULL, NULL };
  struct csr_gate_verdict v;
  memset (&v, 0, sizeof v);
  v.outcome = CSR_GATE_SYNTAX_ERROR;
  v.message = (char *)msg;
  struct csr_patch p;
  csr_error *err = NULL;
  int rc = csr_heal_local (code, &d, &v, &conf, NULL, &p, &err);
  cr_assert_geq (rc, 0);
  if (want == NULL)
    {
      cr_assert_eq (rc, 0, "unexpected patch (%s):\n%s", p.rules, p.code);
      return;
    }
  cr_assert_eq (rc, 1, "no patch for:\n%s", code);
  cr_assert_str_eq (p.code, want, "got:\n%s\nwanted:\n%s", p.code, want);
  cr_assert_str_eq (p.rules, rules);
  check_diff_applies (code, want, p.diff);
  csr_patch_release (&p);
}

Test (did_you_mean, gate_suggestion_renames_every_use)
{
  const struct undef u[] = { { "totl", "name", "total" }, { NULL, NULL, NULL } };
  check_full ("total = 3\nprint(totl + 1, f\"{totl}\", 'totl')  # totl\nx.totl = 1\n", NULL, NULL,
              0, u, NULL, "total = 3\nprint(total + 1, f\"{total}\", 'totl')  # totl\nx.totl = 1\n",
              "did-you-mean");
}

Test (did_you_mean, gate_suggestion_with_missing_import)
{
  const struct undef u[]
      = { { "math", "attribute", NULL }, { "valeus", "name", "values" }, { NULL, NULL, NULL } };
  check_full ("values = [1]\nprint(math.sqrt(4), len(valeus))\n", NULL, NULL, 0, u, NULL,
              "import math\nvalues = [1]\nprint(math.sqrt(4), len(values))\n",
              "missing-import,did-you-mean");
}

Test (did_you_mean, keyword_argument_is_not_renamed)
{
  const struct undef u[] = { { "totl", "name", "total" }, { NULL, NULL, NULL } };
  check_full ("total = 1\nf(totl=totl)\n", NULL, NULL, 0, u, NULL, NULL, NULL);
}

Test (did_you_mean, python_nameerror)
{
  const struct undef u[] = { { "nubmers", "name", NULL }, { NULL, NULL, NULL } };
  check_full ("numbers = [1]\nprint(nubmers)\n", "NameError",
              "name 'nubmers' is not defined. Did you mean: 'numbers'?", 2, u, NULL,
              "numbers = [1]\nprint(numbers)\n", "did-you-mean");
}

Test (did_you_mean, nameerror_of_a_bound_name_is_left)
{
  /* not in the gate's undefined names: bound somewhere (another scope) */
  check_full ("def f():\n    result = 1\nprint(reslt)\n", "NameError",
              "name 'reslt' is not defined. Did you mean: 'result'?", 3, NULL, NULL, NULL, NULL);
}

Test (did_you_mean, ambiguous_is_left)
{
  const struct undef u[] = { { "vals", "name", NULL }, { NULL, NULL, NULL } };
  check_full ("val = 1\nvalx = 2\nprint(vals)\n", "NameError",
              "name 'vals' is not defined. Did you mean: 'val'?", 3, u, NULL, NULL, NULL);
}

Test (did_you_mean, attribute)
{
  check ("import math\nprint(math.sqr(4), math.sqr(9))\n", "AttributeError",
         "module 'math' has no attribute 'sqr'. Did you mean: 'sqrt'?", 2,
         "import math\nprint(math.sqrt(4), math.sqrt(9))\n", "did-you-mean");
  /* sqr is also a plain name: not only an attribute slip */
  check ("sqr = 2\nimport math\nprint(math.sqr(4))\n", "AttributeError",
         "module 'math' has no attribute 'sqr'. Did you mean: 'sqrt'?", 3, NULL, NULL);
}

Test (did_you_mean, importerror)
{
  check ("from collections import defaultdic\nd = defaultdic(int)\n", "ImportError",
         "cannot import name 'defaultdic' from 'collections' (/usr/lib/python3.12/collections/"
         "__init__.py). Did you mean: 'defaultdict'?",
         1, "from collections import defaultdict\nd = defaultdict(int)\n", "did-you-mean");
}

/* ---------------------------------------------------------- py2-idioms */

Test (py2_idioms, names_from_the_gate)
{
  const struct undef u[] = { { "xrange", "call", NULL }, { NULL, NULL, NULL } };
  check_full ("for i in xrange(3):\n    s = 'xrange'\n", NULL, NULL, 0, u, NULL,
              "for i in range(3):\n    s = 'xrange'\n", "py2-idioms");
}

Test (py2_idioms, syntax_and_print_in_one_patch)
{
  check_v ("try:\n    x = 1\nexcept ValueError, e:\n    print 'bad', e\nprint 0777, 1 <> 2, `x`, "
           "'<> `y` 0777'\n",
           "SyntaxError", "multiple exception types must be parenthesized", 3, NULL, true,
           "try:\n    x = 1\nexcept ValueError as e:\n    print('bad', e)\nprint(0o777, 1 != 2, "
           "repr(x), '<> `y` 0777')\n",
           "py2-idioms,py2-print");
}

Test (py2_idioms, print_statement_brings_the_rest)
{
  check_v ("for i in xrange(2):\n    print i\n", "SyntaxError", PRINT_MSG, 2, NULL, true,
           "for i in range(2):\n    print(i)\n", "py2-idioms,py2-print");
}

Test (py2_idioms, dict_methods)
{
  check ("d = {}\nfor k, v in d.iteritems():\n    pass\nif d.has_key(k) or not x.y.has_key(1):\n"
         "    print(d.keys()[0])\n",
         "AttributeError", "'dict' object has no attribute 'iteritems'", 2,
         "d = {}\nfor k, v in d.items():\n    pass\nif (k in d) or not (1 in x.y):\n"
         "    print(list(d.keys())[0])\n",
         "py2-idioms");
}

Test (py2_idioms, string_module)
{
  check ("import string\nprint(string.join(['a', 'b'], '-'), string.join(x), string.letters)\n",
         "AttributeError", "module 'string' has no attribute 'join'", 2,
         "import string\nprint('-'.join(['a', 'b']), \" \".join(x), string.ascii_letters)\n",
         "py2-idioms");
}

Test (py2_idioms, own_method_is_left)
{
  check ("class D:\n    def iteritems(self):\n        return []\nD().iteritems()\n",
         "AttributeError", "'dict' object has no attribute 'iteritems'", 4, NULL, NULL);
}

/* ------------------------------------------------------ foreign-method */

Test (foreign_method, list_and_str)
{
  check ("x = [1]\nx.push(2)\n", "AttributeError", "'list' object has no attribute 'push'", 2,
         "x = [1]\nx.append(2)\n", "foreign-method");
  check ("s = 'a'\nprint(s.toUpperCase(), s.startsWith('a'), s.includes('b'), s.length)\n",
         "AttributeError", "'str' object has no attribute 'toUpperCase'", 2,
         "s = 'a'\nprint(s.upper(), s.startswith('a'), ('b' in s), len(s))\n", "foreign-method");
  check ("print(a.b[0].length)\n", "AttributeError", "'list' object has no attribute 'length'", 1,
         "print(len(a.b[0]))\n", "foreign-method");
}

Test (foreign_method, only_when_the_type_is_named)
{
  check ("x.push(2)\n", "AttributeError", "'Stack' object has no attribute 'push'", 1, NULL, NULL);
  /* two objects on the line: which one failed is not known */
  check ("a.push(b.push(3))\n", "AttributeError", "'list' object has no attribute 'push'", 1, NULL,
         NULL);
  /* other lines are left */
  check ("x.push(1)\ny.push(2)\n", "AttributeError", "'list' object has no attribute 'push'", 2,
         "x.push(1)\ny.append(2)\n", "foreign-method");
}

/* --------------------------------------------------------- pasted-code */

Test (pasted_code, fence_repl_indent_tabs)
{
  check_v ("Here:\n```python\nprint(1)\n```\nDone.\n", "SyntaxError", "invalid syntax", 1, NULL,
           true, "print(1)\n", "pasted-code");
  check_v ("```\nx = 1\n```\n```\ny\n```\n", "SyntaxError", "invalid syntax", 1, NULL, true, NULL,
           NULL);
  check_v (">>> for i in range(2):\n...     print(i)\n...\n0\n1\n", "SyntaxError", "invalid syntax",
           1, NULL, true, "for i in range(2):\n    print(i)\n\n", "pasted-code");
  check_v ("    x = 1\n\n    if x:\n        print(x)\n", "IndentationError", "unexpected indent", 1,
           NULL, true, "x = 1\n\nif x:\n    print(x)\n", "pasted-code");
  check_v ("if x:\n    a = 1\n\tb = 2\n", "TabError",
           "inconsistent use of tabs and spaces in indentation", 3, NULL, true,
           "if x:\n    a = 1\n    b = 2\n", "pasted-code");
}

/* ---------------------------------------------------- submodule-import */

Test (submodule_import, xml_etree)
{
  check ("import xml\nr = xml.etree.ElementTree.fromstring(s)\nt = "
         "xml.etree.ElementTree.tostring(r)\n",
         "AttributeError", "module 'xml' has no attribute 'etree'", 2,
         "import xml\nimport xml.etree.ElementTree\nr = xml.etree.ElementTree.fromstring(s)\n"
         "t = xml.etree.ElementTree.tostring(r)\n",
         "submodule-import");
  check ("r = xml.etree.ElementTree.fromstring(s)\n", "AttributeError",
         "module 'xml' has no attribute 'etree'", 1, NULL, NULL);
}

Test (heal_conf, tables)
{
  const struct csr_heal_map *m = csr_heal_map_find (&conf, CSR_MAP_METHOD, "list", "push", 4);
  cr_assert_not_null (m);
  cr_assert_str_eq (m->b, ".append");
  m = csr_heal_map_find (&conf, CSR_MAP_PY2_NAME, NULL, "xrange", 6);
  cr_assert_not_null (m);
  cr_assert_str_eq (m->b, "range");
  struct csr_heal_conf c;
  csr_error *err = NULL;
  cr_assert_eq (csr_heal_conf_parse ("method: list push\n", 18, &c, &err), -1);
  cr_assert (strstr (csr_error_text (err), "line 1") != NULL);
  csr_error_freep (&err);
  cr_assert_eq (csr_heal_conf_parse ("bogus: a b\n", 11, &c, &err), -1);
  csr_error_freep (&err);
  cr_assert_eq (csr_heal_conf_parse ("submodule: xml\n", 15, &c, &err), -1);
  csr_error_freep (&err);
}

Test (py2_idioms, numbers_raise_and_modules)
{
  check_v (
      "import ConfigParser, Queue as Q\nfrom StringIO import StringIO\nx = 10L + 0777L + 0xffL\n"
      "if x < 0:\n    raise ValueError, 'neg'\nprint 0.5, 1e5, 0, 0o7, '10L'\n",
      "SyntaxError", "invalid decimal literal", 3, NULL, true,
      "import configparser as ConfigParser, queue as Q\nfrom io import StringIO\n"
      "x = 10 + 0o777 + 0xff\nif x < 0:\n    raise ValueError('neg')\n"
      "print(0.5, 1e5, 0, 0o7, '10L')\n",
      "py2-idioms,py2-print");
  /* three-argument raise: left */
  check_v ("raise E, 'm', tb\n", "SyntaxError", "invalid syntax", 1, NULL, true, NULL, NULL);
}

Test (py2_idioms, module_not_found)
{
  check ("import urlparse\nprint(urlparse.urlparse(u).path)\n", "ModuleNotFoundError",
         "No module named 'urlparse'", 1,
         "import urllib.parse as urlparse\nprint(urlparse.urlparse(u).path)\n", "py2-idioms");
  check ("import urllib2\n", "ModuleNotFoundError", "No module named 'urllib2'", 1, NULL, NULL);
}

Test (py2_idioms, string_functions_and_attrs)
{
  check (
      "import string, sys\nprint(string.upper(s), string.replace(a + b, 'x', 'y'), sys.maxint)\n",
      "AttributeError", "module 'string' has no attribute 'upper'", 2,
      "import string, sys\nprint(s.upper(), (a + b).replace('x', 'y'), sys.maxsize)\n",
      "py2-idioms");
  check ("print(map(str, xs)[0], zip(a, b)[1:])\n", "TypeError",
         "'map' object is not subscriptable", 1,
         "print(list(map(str, xs))[0], list(zip(a, b))[1:])\n", "py2-idioms");
}

Test (foreign_method, join)
{
  check ("print(words.join(', '), words.join(sep + sep))\n", "AttributeError",
         "'list' object has no attribute 'join'", 1,
         "print(', '.join(words), (sep + sep).join(words))\n", "foreign-method");
}

Test (did_you_mean, rivals)
{
  /* another attribute of the snippet as close: no fix */
  check ("class A:\n    def __init__(self):\n        self.value = 1\n        self.valve = 2\n"
         "print(A().vale)\n",
         "AttributeError", "'A' object has no attribute 'vale'. Did you mean: 'value'?", 5, NULL,
         NULL);
  /* a plain name near an attribute is no rival (str vs sqr) */
  check ("import math\nprint(str(math.sqr(4)))\n", "AttributeError",
         "module 'math' has no attribute 'sqr'. Did you mean: 'sqrt'?", 2,
         "import math\nprint(str(math.sqrt(4)))\n", "did-you-mean");
  /* a builtin as close as the suggestion (sum vs sums): no fix */
  const struct undef u[] = { { "sumx", "call", NULL }, { NULL, NULL, NULL } };
  check_full ("sums = lambda x: x\nprint(sumx(1))\n", "NameError",
              "name 'sumx' is not defined. Did you mean: 'sums'?", 2, u, NULL, NULL, NULL);
}

Test (py2_idioms, gate_names_only_when_blocked)
{
  /* the gate passed (the name sits in a branch that did not run) and the
   * attempt failed for another reason: no rename */
  struct csr_diagnosis d = { "ZeroDivisionError", "division by zero", 3, NULL, NULL };
  struct csr_undefined_name names[1] = { { "xrange", 2, "call", NULL } };
  struct csr_gate_verdict v;
  memset (&v, 0, sizeof v);
  v.outcome = CSR_GATE_PASS;
  v.undefined = names;
  v.n_undefined = 1;
  struct csr_patch p;
  csr_error *err = NULL;
  cr_assert_eq (
      csr_heal_local ("if False:\n    xrange(1)\nprint(1 / 0)\n", &d, &v, &conf, NULL, &p, &err),
      0);
  v.outcome = CSR_GATE_BLOCKED;
  cr_assert_eq (
      csr_heal_local ("if False:\n    xrange(1)\nprint(1 / 0)\n", &d, &v, &conf, NULL, &p, &err),
      1);
  cr_assert_str_eq (p.code, "if False:\n    range(1)\nprint(1 / 0)\n");
  csr_patch_release (&p);
}

Test (foreign_method, str_not_equals)
{
  check ("print('n=' + n.toString(), n.toString(16))\n", "AttributeError",
         "'int' object has no attribute 'toString'", 1, "print('n=' + str(n), n.toString(16))\n",
         "foreign-method");
  check ("if s.equals('a') or s.isEmpty():\n    pass\n", "AttributeError",
         "'str' object has no attribute 'equals'", 1, "if (s == 'a') or (not s):\n    pass\n",
         "foreign-method");
}

Test (foreign_method, foreign_calls)
{
  const struct undef u[]
      = { { "console", "attribute", NULL }, { "parseInt", "call", NULL }, { NULL, NULL, NULL } };
  check_full ("console.log(parseInt('4'), 'console.log')\nx.console.log(1)\n", NULL, NULL, 0, u,
              NULL, "print(int('4'), 'console.log')\nx.console.log(1)\n", "foreign-call");
  /* console is the snippet's own (not reported by the gate): left */
  check_full ("console.log(1)\n", NULL, NULL, 0, NULL, NULL, NULL, NULL);
  const struct undef w[]
      = { { "Math", "attribute", NULL }, { "null", "name", NULL }, { NULL, NULL, NULL } };
  check_full ("x = Math.floor(y) if y is not null else null\n", NULL, NULL, 0, w, NULL,
              "import math\nx = math.floor(y) if y is not None else None\n",
              "missing-import,foreign-call");
}

Test (foreign_method, line_not_in_the_code)
{
  check ("x.push(1)\n", "AttributeError", "'list' object has no attribute 'push'", 40, NULL, NULL);
}

Test (foreign_method, a_name_bound_once_on_every_line)
{
  check ("names = []\nnames.push('a')\nnames.push('b')\nprint(names.length, other.length)\n",
         "AttributeError", "'list' object has no attribute 'push'", 2,
         "names = []\nnames.append('a')\nnames.append('b')\nprint(len(names), other.length)\n",
         "foreign-method");
  /* bound twice, or a parameter: only the failing line */
  check ("xs = []\nxs.push(1)\nxs = Stack()\nxs.push(2)\n", "AttributeError",
         "'list' object has no attribute 'push'", 2,
         "xs = []\nxs.append(1)\nxs = Stack()\nxs.push(2)\n", "foreign-method");
  check ("def f(xs):\n    xs.push(1)\nxs = []\nxs.push(2)\n", "AttributeError",
         "'list' object has no attribute 'push'", 4,
         "def f(xs):\n    xs.push(1)\nxs = []\nxs.append(2)\n", "foreign-method");
  check ("a, xs = 1, []\nxs.push(1)\nxs.push(2)\n", "AttributeError",
         "'list' object has no attribute 'push'", 2, "a, xs = 1, []\nxs.append(1)\nxs.push(2)\n",
         "foreign-method");
}

Test (foreign_method, map_filter_index)
{
  check ("print(xs.map(f), xs.filter(lambda x: x > 1), xs.get(0), xs.len())\n", "AttributeError",
         "'list' object has no attribute 'map'", 1,
         "print(list(map(f, xs)), list(filter(lambda x: x > 1, xs)), xs[0], len(xs))\n",
         "foreign-method");
}
