#!/usr/bin/env bash
# bundle.sh OUT BINARY...: copies the binaries to OUT/bin and every shared library they load that is not part of the
# C runtime or the GPU driver to OUT/lib, and points their RPATH at $ORIGIN/../lib, so OUT runs on a host without
# this machine's libraries (HTSlib and its compression and network libraries).
set -euo pipefail
shopt -s nullglob
out=$1; shift
mkdir -p "$out/bin" "$out/lib"
system='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libcuda\.so|libgcc_s\.so|libstdc\+\+\.so)'
for bin in "$@"; do
  [ -n "$bin" ] || continue
  cp -f "$bin" "$out/bin/"
  ldd "$bin" | awk '/=> \//{print $1, $3}' | while read -r name path; do
    if ! [[ $name =~ $system ]]; then cp -fL "$path" "$out/lib/$name"; fi
  done
done
if command -v patchelf >/dev/null; then
  for f in "$out"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
  for f in "$out"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done
fi
echo "bundle: $(ls "$out/bin" | tr '\n' ' ')+ $(ls "$out/lib" | wc -l) libraries in $out"
