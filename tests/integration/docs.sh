#!/bin/bash
# The documentation against the binary: every long option a command's --help
# prints appears in that command's man page (as --NAME, a whole word), so an
# option added without its documentation fails here.  Whatever --help prints
# is compared, so new options are covered without changing this file.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

T=$(tmpdir)
MAN=$CSRUN_SRCDIR/man

# The man page as plain text: \- is -, font escapes and \& go.
man_text () {
  sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\&//g' -e 's/\\(em/ /g' "$1"
}

# The long options in a --help text (both the argp style, "  -t, --timeout=DURATION",
# and the urfave style of the OCI commands, "   --root value"), without the
# ones every command has.
help_options () {
  grep -oE '(^|[[:space:],])--[a-z][a-z0-9-]*' | sed 's/^[[:space:],]*//' | sort -u |
    grep -vxE -- '--(help|usage|version)'
}

# check_page DESC MANPAGE HELP-COMMAND...: every long option of the help is in the page.
check_page () {
  local desc=$1 page=$2
  shift 2
  if ! "$@" >"$T/help.txt" 2>&1; then
    not_ok "$desc: every --help option is in $(basename "$page")" "'$*' failed: $(head -c 1000 "$T/help.txt")"
    return
  fi
  local opts missing="" o n=0
  opts=$(help_options <"$T/help.txt")
  man_text "$page" >"$T/man.txt"
  for o in $opts; do
    n=$((n + 1))
    # A whole word: --json must not be found inside --json-foo.
    if ! grep -qE -- "(^|[^a-z0-9-])$o([^a-z0-9-]|\$)" "$T/man.txt"; then
      missing="$missing $o"
    fi
  done
  if [ "$n" -eq 0 ]; then
    ok "$desc: no long options (--help prints none)"
  elif [ -z "$missing" ]; then
    ok "$desc: all $n --help options are in $(basename "$page")"
  else
    not_ok "$desc: every --help option is in $(basename "$page")" "missing:$missing"
  fi
}

# The test itself must be able to fail: a page without an option of --help.
printf '.TH X 1\n.SH OPTIONS\n.TP\n.B \\-\\-timeout\nx\n' >"$T/fake.1"
check_page_out=$(check_page "self-test" "$T/fake.1" printf '  -t, --timeout=D   x\n  --json  y\n' 2>&1)
if [[ $check_page_out == "not ok"*"missing: --json"* ]]; then
  ok "the check fails when an option is missing from the page (--json, not --timeout)"
else
  not_ok "the check fails when an option is missing from the page" "$check_page_out"
fi
# ...and finds one written with font escapes and \-.
printf '.TH X 1\n.TP\n.BI \\-\\-timeout= D\n.TP\n.BR \\-\\-json " x"\n' >"$T/fake2.1"
check_page_out=$(check_page "self-test" "$T/fake2.1" printf '  -t, --timeout=D   x\n  --json  y\n' 2>&1)
if [[ $check_page_out == "ok"* ]]; then
  ok "the check reads \\- and font escapes"
else
  not_ok "the check reads \\- and font escapes" "$check_page_out"
fi

check_page "csrun (global options)" "$MAN/csrun.1" "$CSRUN" --help
check_page "csrun run" "$MAN/csrun-run.1" "$CSRUN" run --help
check_page "csrun check" "$MAN/csrun-check.1" "$CSRUN" check --help
check_page "csrun cache" "$MAN/csrun-cache.1" "$CSRUN" cache --help
check_page "csrun batch" "$MAN/csrun-batch.1" "$CSRUN" batch --help
check_page "csrun hook" "$MAN/csrun-hook.1" "$CSRUN" hook --help
check_page "csrun mcp" "$MAN/csrun-mcp.1" "$CSRUN" mcp --help
check_page "csrun tool-schema" "$MAN/csrun-mcp.1" "$CSRUN" tool-schema --help
for c in create exec wait run session ls inspect stop start rm gc cp read write find checkpoint restore; do
  check_page "csrun sandbox $c" "$MAN/csrun-sandbox.1" "$CSRUN" sandbox "$c" --help
done
check_page "csrun sandbox port ls" "$MAN/csrun-sandbox.1" "$CSRUN" sandbox port ls --help
check_page "csrun sandbox exec ls" "$MAN/csrun-sandbox.1" "$CSRUN" sandbox exec ls --help
for c in ls rm; do
  check_page "csrun sandbox checkpoint $c" "$MAN/csrun-sandbox.1" "$CSRUN" sandbox checkpoint "$c" --help
done
for c in create start state kill delete list ps events spec features pause resume exec update; do
  check_page "csrun $c" "$MAN/csrun-oci.8" "$CSRUN" "$c" --help
done
builder=$CSRUN_SRCDIR/rootfs-builder/csrun-rootfs-builder
if [ -x "$builder" ]; then
  check_page "csrun-rootfs-builder" "$MAN/csrun-rootfs-builder.1" "$builder" --help
else
  skip "csrun-rootfs-builder's options" "no $builder"
fi

# Every man page the build installs is named in the README.
for page in $(sed -n '/^dist_man_MANS/,/^$/p' "$CSRUN_SRCDIR/Makefile.am" | grep -oE 'man/[a-z0-9-]+\.[0-9]'); do
  name=$(basename "$page")
  ref="${name%.*}(${name##*.})"
  if [ "$(grep -cF -- "$ref" "$CSRUN_SRCDIR/README.md")" -ge 2 ]; then
    ok "README names $ref (in the layout and in what make install installs)"
  else
    not_ok "README names $ref twice (the layout, make install)" "found $(grep -cF -- "$ref" "$CSRUN_SRCDIR/README.md") times"
  fi
done

done_testing
