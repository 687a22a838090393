#!/usr/bin/env bash
# deb.sh BUILD_DIR SOURCE_DIR: makes the Debian package of a build (cpack -G DEB), unpacks it into an empty root and
# runs it from there: the program on the demo data (the same bytes as the build's program), the Python module with the
# system Python (the same hits), the manual page; then lintian (when installed) must report no error.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL $*"; exit 1; }
version=$(sed -n 's/^project(swgpu VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
arch=$(dpkg --print-architecture)
deb=swgpu_${version}_${arch}.deb
# A package folder of its own, so that a cpack run of the build folder elsewhere does not race this one.
(cd "$build" && cpack -G DEB -B "$tmp/pkg" > "$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
[ -f "$tmp/pkg/$deb" ] || fail "cpack made no $deb: $(ls "$tmp/pkg")"
echo "ok   $deb ($(du -k "$tmp/pkg/$deb" | cut -f1) KiB)"
root=$tmp/root
mkdir "$root"
dpkg-deb -x "$tmp/pkg/$deb" "$root"
for f in usr/bin/swgpu usr/include/swgpu/swgpu.hpp usr/lib/cmake/swgpu/swgpuConfig.cmake usr/share/doc/swgpu/copyright; do
  [ -e "$root/$f" ] || fail "the package lacks /$f"
done
ls "$root"/usr/lib/libswgpu.so.* > /dev/null 2>&1 || fail "the package lacks libswgpu.so"
examples=$root/usr/share/doc/swgpu/examples
args="align $examples/demo_queries.fa $examples/demo_db.fa -k 5"
"$root/usr/bin/swgpu" $args > "$tmp/packaged.tsv" 2> "$tmp/packaged.err" || { cat "$tmp/packaged.err"; fail "the packaged program"; }
"$build/app/swgpu" $args > "$tmp/built.tsv" 2> /dev/null
cmp -s "$tmp/packaged.tsv" "$tmp/built.tsv" || fail "the packaged program prints other bytes than the build's"
[ "$(wc -l < "$tmp/packaged.tsv")" -gt 0 ] || fail "the packaged program printed no hit"
echo "ok   the packaged program prints the build's $(wc -l < "$tmp/packaged.tsv") hits"
if [ -f "$root/usr/share/man/man1/swgpu.1.gz" ]; then
  zcat "$root/usr/share/man/man1/swgpu.1.gz" | grep -q "^\.TH SWGPU" || fail "the manual page has no title"
  echo "ok   manual page"
else
  echo "skip manual page (help2man was not installed when the build was configured)"
fi
site=$root/usr/lib/python3/dist-packages
if [ -d "$site/swgpu" ]; then
  PYTHONPATH=$site /usr/bin/python3 - "$examples" "$tmp/packaged.tsv" <<'PY' || fail "the packaged Python module"
import os, sys
import swgpu
examples, cli = sys.argv[1], sys.argv[2]
assert os.path.dirname(swgpu.__file__).endswith("dist-packages/swgpu"), swgpu.__file__
hits = swgpu.search(os.path.join(examples, "demo_queries.fa"), os.path.join(examples, "demo_db.fa"), max_target_seqs=5)
rows = [line.split("\t") for line in open(cli)]
assert [(h.qseqid, h.sseqid, h.length) for h in hits] == [(r[0], r[1], int(r[3])) for r in rows], \
    "hits differ from the program's"
print("ok   the packaged Python module (%s) gives the program's %d hits" % (swgpu.__version__, len(hits)))
PY
else
  echo "skip Python module (not built)"
fi
if command -v lintian > /dev/null; then
  lintian --tag-display-limit 0 "$tmp/pkg/$deb" > "$tmp/lintian.txt" 2>&1 || true
  grep -v "running with root privileges" "$tmp/lintian.txt" || true
  if grep -q "^E:" "$tmp/lintian.txt"; then fail "lintian reports errors"; fi
  echo "ok   lintian: no error"
else
  echo "skip lintian (not installed: Debian lintian)"
fi
