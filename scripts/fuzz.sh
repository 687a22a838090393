#!/usr/bin/env bash
# Fuzzes the input parsers: builds the libFuzzer targets in tests/fuzz with clang++ (AddressSanitizer and
# UndefinedBehaviorSanitizer, outside the CMake build) and runs each for a bounded time.
#
#   scripts/fuzz.sh [SECONDS]      SECONDS per target, default 60
#
# Environment: SWGPU_FUZZ_DIR (default build-fuzz/ in the repository): binaries, corpora and crash artifacts;
# CXX (default clang++). A target that finds a crash, a sanitizer report, a leak or a hang stops early and leaves the
# input as $SWGPU_FUZZ_DIR/artifacts/<target>-crash-*; rerun it with $SWGPU_FUZZ_DIR/<target> FILE. The exit status
# is non-zero when any target failed.
set -euo pipefail

seconds=${1:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${SWGPU_FUZZ_DIR:-$root/build-fuzz}
cxx=${CXX:-clang++}
mkdir -p "$out/artifacts"

# The built-in matrices, compiled in as core/CMakeLists.txt does it.
gen=$out/builtin_matrices.cpp
{
    printf '#include "core/align/builtin_matrices.hpp"\n\nnamespace swgpu {\n'
    printf 'namespace {\nconst builtin_matrix_text table[] = {\n'
    for f in $(ls "$root"/data/matrices/* | LC_ALL=C sort); do
        name=$(basename "$f")
        [ "$name" = README.md ] && continue
        printf '    {"%s", R"swgpu_matrix(' "$name"
        cat "$f"
        printf ')swgpu_matrix"},\n'
    done
    printf '};\n}  // namespace\n\n'
    printf 'std::span<const builtin_matrix_text> builtin_matrix_texts() { return table; }\n\n}  // namespace swgpu\n'
} > "$gen"

flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$root")
read -r -a hts_flags <<< "$(pkg-config --cflags --libs htslib)"
core=("$root/core/scoring.cpp" "$root/core/sequence.cpp" "$gen")

echo "building fuzz targets in $out"
"$cxx" "${flags[@]}" "$root/tests/fuzz/fuzz_sequence_reader.cpp" "$root/io/sequence_reader.cpp" "${core[@]}" \
    "${hts_flags[@]}" -o "$out/fuzz_sequence_reader"
"$cxx" "${flags[@]}" "$root/tests/fuzz/fuzz_matrix_parser.cpp" "$root/io/matrix_file.cpp" "${core[@]}" \
    "${hts_flags[@]}" -o "$out/fuzz_matrix_parser"

# Seed corpora: small valid and odd inputs, so that the fuzzer starts inside the grammar. For the reader, the first
# byte of each seed is its mode byte (see fuzz_sequence_reader.cpp).
seeds=$out/corpus_sequence_reader
mkdir -p "$seeds"
printf '\x00>a desc\nACGT\nacgt\n>b\nM*\n' > "$seeds/fasta"
printf '\x01>a\r\nAC\r\n>\r\nGT\r\n>c\n12\n' > "$seeds/crlf_skip"
printf '\x04@r1 x\nACGT\nAC\n+\n@III\n+I\n@r2\nA\n+\nI\n' > "$seeds/fastq"
printf '\x02s:2-5\n>s\nACGTACGT\nACGTACGT\nAC\n>t\nMM\n' > "$seeds/region"
printf '\x02{a:b}:1-2\n>a:b\nACGT\n' > "$seeds/region_colon"
{ printf '\x00'; printf '>x\nAC\n' | gzip -c; } > "$seeds/gzip"
head -c 3000 "$root/data/demo_db.fa" | { printf '\x00'; gzip -c; } > "$seeds/demo_gzip"
head -c 3000 "$root/data/demo_db.fa" | { printf '\x08'; cat; } > "$seeds/demo"
matrices=$out/corpus_matrix_parser
mkdir -p "$matrices"
cp "$root"/data/matrices/* "$matrices/"
printf '   A  C\r\nA  1 -2\r\nC -2  3\r\n' > "$matrices/small_crlf"

status=0
for target in fuzz_sequence_reader fuzz_matrix_parser; do
    corpus=$out/corpus_${target#fuzz_}
    echo "running $target for $seconds s (corpus $corpus)"
    if ! (cd "$out" && "./$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
            -artifact_prefix="$out/artifacts/$target-" -print_final_stats=1 "$corpus") > "$out/$target.log" 2>&1; then
        echo "$target FAILED (log: $out/$target.log)"
        status=1
    fi
    tail -n 25 "$out/$target.log"
done
ls "$out/artifacts" | grep -q . && { echo "artifacts left in $out/artifacts:"; ls -l "$out/artifacts"; status=1; }
exit $status
