#!/usr/bin/env bash
# Fuzzes every parser of outside data: builds the libFuzzer targets in tests/fuzz with clang++ (AddressSanitizer and
# UndefinedBehaviorSanitizer, outside the CMake build), writes their seed corpora from the repository's data and runs
# each for a bounded time with a fixed seed.
#
#   scripts/fuzz.sh [--short] [SECONDS] [TARGET...]
#
# SECONDS per target (default 60; --short: 3, as CI runs it). TARGET: some of the names below (default: all).
# Targets (tests/fuzz/fuzz_<name>.cpp): sequence_reader, matrix_parser, fastq, region, database_file, npy, image,
# matrix_market, rectangles, batch_list, loop_indices.
#
# Environment: SWGPU_FUZZ_DIR (default build-fuzz/ in the repository): objects, binaries, corpora, logs and crash
# artifacts; CXX (default clang++); SWGPU_FUZZ_SEED (default 1); SWGPU_FUZZ_JOBS (compile jobs, default nproc).
# Seeds are written afresh to $SWGPU_FUZZ_DIR/seeds/<name> (tests/fuzz/make_seeds.cpp and below); what a run finds
# is kept in $SWGPU_FUZZ_DIR/corpus/<name> and read again by the next run. A target that finds a crash, a sanitizer
# report, a leak, an allocation over 1.5 GB or a hang stops early and leaves the input as
# $SWGPU_FUZZ_DIR/artifacts/<name>-crash-* (or -leak-, -oom-, -timeout-); rerun it with $SWGPU_FUZZ_DIR/fuzz_<name>
# FILE. The exit status is non-zero when any target failed. Each run ends with a table of executions and seconds.
set -euo pipefail

all_targets=(sequence_reader matrix_parser fastq region database_file npy image matrix_market rectangles batch_list
             loop_indices)
seconds=
short=0
targets=()
for a in "$@"; do
    case $a in
        --short) short=1 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        [0-9]*) seconds=$a ;;
        *) [[ " ${all_targets[*]} " == *" $a "* ]] || { echo "fuzz.sh: unknown target '$a' (${all_targets[*]})" >&2; exit 2; }
           targets+=("$a") ;;
    esac
done
[ -n "$seconds" ] || seconds=$([ $short = 1 ] && echo 3 || echo 60)
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${SWGPU_FUZZ_DIR:-$root/build-fuzz}
cxx=${CXX:-clang++}
seed=${SWGPU_FUZZ_SEED:-1}
jobs=${SWGPU_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
command -v "$cxx" > /dev/null || { echo "fuzz.sh: $cxx not found (libFuzzer needs clang)" >&2; exit 1; }
mkdir -p "$out/obj" "$out/artifacts" "$out/seeds" "$out/corpus"
started=$SECONDS

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
} > "$gen.new"
cmp -s "$gen.new" "$gen" && rm "$gen.new" || mv "$gen.new" "$gen"
# The tuning table, compiled in as core/CMakeLists.txt does it.
tuning_gen=$out/tuning_data.cpp
{
    printf '#include <string_view>\nnamespace swgpu::tuning {\nextern const std::string_view tuning_tsv;\n'
    printf 'const std::string_view tuning_tsv = R"swgpu_tsv('
    cat "$root/data/tuning.tsv"
    printf ')swgpu_tsv";\n}\n'
} > "$tuning_gen.new"
cmp -s "$tuning_gen.new" "$tuning_gen" && rm "$tuning_gen.new" || mv "$tuning_gen.new" "$tuning_gen"

# The parsers and what they need, compiled once (coverage-instrumented) into one archive the targets link.
lib_sources=(core/align/scoring.cpp core/align/statistics.cpp core/align/sequence.cpp core/align/letter_codes.cpp core/align/simd/isa.cpp core/tuning.cpp core/numerics/sat.cpp
             core/numerics/finite.cpp core/numerics/levels.cpp io/memory.cpp io/output_file.cpp
             io/align/sequence_reader.cpp io/align/fasta_blocks.cpp io/align/matrix_file.cpp io/align/database_file.cpp io/align/batch_list.cpp
             io/arrays/npy.cpp io/arrays/image.cpp io/arrays/matrix_market.cpp io/arrays/rectangles.cpp
             io/arrays/loop_indices.cpp)
common=(-std=c++20 -g -O1 -fno-omit-frame-pointer -fno-sanitize-recover=undefined -I"$root")
read -r -a libs <<< "$(pkg-config --libs htslib libpng libtiff-4 zlib) -lpthread"
read -r -a hts_cflags <<< "$(pkg-config --cflags htslib libpng libtiff-4)"

# Rebuilt when missing or older than its source or than any header of the tree (a full rebuild is about a minute).
newest_header=$(find "$root/core" "$root/io" "$root/tests/fuzz" -name '*.hpp' -newer "$out/obj/.stamp" 2>/dev/null | head -n 1 || true)
[ -e "$out/obj/.stamp" ] || newest_header=all
stale() {  # object source
    [ -n "$newest_header" ] || [ ! -e "$1" ] || [ "$2" -nt "$1" ]
}
pids=()
compile() {  # object source flags...
    local obj=$1 src=$2
    shift 2
    stale "$obj" "$src" || return 0
    "$cxx" "${common[@]}" "${hts_cflags[@]}" "$@" -c "$src" -o "$obj" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
}
finish() {
    local p
    for p in "${pids[@]}"; do wait "$p"; done
    pids=()
}
echo "building fuzz targets in $out ($jobs jobs)"
objects=()
for s in "${lib_sources[@]}" "$gen" "$tuning_gen"; do
    [[ $s == /* ]] || s=$root/$s
    o=$out/obj/$(basename "${s%.cpp}").o
    objects+=("$o")
    compile "$o" "$s" -fsanitize=fuzzer-no-link,address,undefined
done
for t in "${targets[@]}"; do
    compile "$out/obj/fuzz_$t.o" "$root/tests/fuzz/fuzz_$t.cpp" -fsanitize=fuzzer-no-link,address,undefined
done
compile "$out/obj/make_seeds.o" "$root/tests/fuzz/make_seeds.cpp" -fsanitize=fuzzer-no-link,address,undefined
finish
rm -f "$out/libswgpu_fuzz.a"
ar rcs "$out/libswgpu_fuzz.a" "${objects[@]}"
touch "$out/obj/.stamp"
for t in "${targets[@]}"; do
    "$cxx" -fsanitize=fuzzer,address,undefined "$out/obj/fuzz_$t.o" "$out/libswgpu_fuzz.a" "${libs[@]}" -o "$out/fuzz_$t" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
done
"$cxx" -fsanitize=fuzzer-no-link,address,undefined "$out/obj/make_seeds.o" "$out/libswgpu_fuzz.a" "${libs[@]}" \
    -o "$out/make_seeds" &
pids+=($!)
finish
echo "built in $((SECONDS - started)) s"

# Seed corpora, afresh: the project's writers over data/ and tests/data/ (make_seeds), and the hand-written ones.
rm -rf "$out/seeds"
ASAN_OPTIONS=detect_leaks=1 "$out/make_seeds" "$root" "$out/seeds"
seeds=$out/seeds/sequence_reader  # byte 0 of each is its mode byte (see fuzz_sequence_reader.cpp)
mkdir -p "$seeds"
printf '\x00>a desc\nACGT\nacgt\n>b\nM*\n' > "$seeds/fasta"
printf '\x01>a\r\nAC\r\n>\r\nGT\r\n>c\n12\n' > "$seeds/crlf_skip"
printf '\x04@r1 x\nACGT\nAC\n+\n@III\n+I\n@r2\nA\n+\nI\n' > "$seeds/fastq"
printf '\x02s:2-5\n>s\nACGTACGT\nACGTACGT\nAC\n>t\nMM\n' > "$seeds/region"
printf '\x02{a:b}:1-2\n>a:b\nACGT\n' > "$seeds/region_colon"
{ printf '\x00'; printf '>x\nAC\n' | gzip -cn; } > "$seeds/gzip"
head -c 3000 "$root/data/demo_db.fa" | { printf '\x00'; gzip -cn; } > "$seeds/demo_gzip"
head -c 3000 "$root/data/demo_db.fa" | { printf '\x08'; cat; } > "$seeds/demo"
head -c 3000 "$root/tests/data/crosscheck/lambda_pieces.fa" | { printf '\x00'; cat; } > "$seeds/dna"
seeds=$out/seeds/matrix_parser
mkdir -p "$seeds"
for f in "$root"/data/matrices/*; do [ "$(basename "$f")" = README.md ] || cp "$f" "$seeds/"; done
printf '   A  C\r\nA  1 -2\r\nC -2  3\r\n' > "$seeds/small_crlf"

# Artifacts of an earlier run of a target move to artifacts/old/ when it runs again.
mkdir -p "$out/artifacts/old"
for t in "${targets[@]}"; do
    find "$out/artifacts" -maxdepth 1 -type f -name "$t-*" -exec mv -f {} "$out/artifacts/old/" \;
done

status=0
summary=$(printf '%-16s %12s %8s  %s\n' target executions seconds result)
for t in "${targets[@]}"; do
    mkdir -p "$out/corpus/$t"
    max_len=8192
    [[ $t == image || $t == database_file ]] && max_len=16384
    echo "running fuzz_$t for $seconds s (seed $seed)"
    t0=$SECONDS
    result=ok
    if ! (cd "$out" && "./fuzz_$t" -seed="$seed" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
            -malloc_limit_mb=1536 -max_len=$max_len -artifact_prefix="$out/artifacts/$t-" -print_final_stats=1 \
            "$out/corpus/$t" "$out/seeds/$t") > "$out/fuzz_$t.log" 2>&1; then
        echo "fuzz_$t FAILED (log: $out/fuzz_$t.log)"
        tail -n 40 "$out/fuzz_$t.log"
        status=1
        result=FAILED
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz_$t.log" | tail -n 1)
    summary+=$'\n'$(printf '%-16s %12s %8s  %s' "$t" "${runs:-?}" "$((SECONDS - t0))" "$result")
done
echo "$summary"
echo "fuzz.sh: $((SECONDS - started)) s in all"
if find "$out/artifacts" -maxdepth 1 -type f | grep -q .; then
    echo "artifacts in $out/artifacts:"
    find "$out/artifacts" -maxdepth 1 -type f -exec ls -l {} +
    status=1
fi
exit $status
