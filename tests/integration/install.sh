#!/bin/bash
# `make install` puts the binary, the rootfs, policies, man pages and contrib
# files under the prefix, and the installed csrun finds its rootfs with no flags.
. "$CSRUN_SRCDIR/tests/lib/tap.sh"

D=$(tmpdir)
if ! make -s -C "$CSRUN_BUILDDIR" install DESTDIR="$D" >"$D.log" 2>&1; then
  not_ok "make install DESTDIR=..." "$(tail -20 "$D.log")"
  rm -f "$D.log"
  done_testing
  exit 1
fi
rm -f "$D.log"
ok "make install DESTDIR=..."
prefix=$(sed -n 's/^prefix = //p' "$CSRUN_BUILDDIR/Makefile")
root="$D$prefix"
for f in bin/csrun bin/csrun-rootfs-builder share/csrun/python-rootfs.tar.zst share/csrun/python-rootfs.tar.zst.sha256 \
  share/csrun/policies/gate.py share/csrun/policies/gate.conf share/csrun/policies/heal.conf \
  share/csrun/policies/silent-failure.conf share/man/man1/csrun.1 share/man/man1/csrun-run.1 \
  share/man/man1/csrun-check.1 share/man/man5/csrun-policy.5 share/man/man1/csrun-rootfs-builder.1 \
  share/man/man1/csrun-mcp.1 share/bash-completion/completions/csrun; do
  [ -e "$root/$f" ] && ok "installed $f" || not_ok "installed $f" "missing $root/$f"
done
printf 'print("installed", 6 * 7)\n' > "$D/t.py"
out=$(env -u CSRUN_ROOTFS "$root/bin/csrun" run --quiet "$D/t.py" 2>&1)
[ "$out" = "installed 42" ] && ok "the installed csrun finds its rootfs with no flags" || not_ok "installed csrun runs" "$out"
done_testing
