#include "io/align/report.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "io/align/dotplot.hpp"

namespace swgpu::io {

namespace {

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f s", s);
    return buf;
}

std::string seconds(std::chrono::steady_clock::duration d) { return seconds(std::chrono::duration<double>(d).count()); }

run_header header_of(const report_settings& settings, const std::string& query_source) {
    run_header header{settings.version, settings.command_line, query_source, settings.db_source, settings.read_group};
    header.references = settings.references;
    header.references_capped = settings.format.kind == format_kind::sam && !header.references;
    return header;
}

const evalue_calculator* statistics_of(const search_results& results) {
    return results.statistics ? &*results.statistics : nullptr;
}

// One query file that held zero-length reads: they go back to their places, without hits (SAM: unmapped records).
void write_with_empty(const report_settings& settings, const report_queries& queries, const scoring& sc,
                      const search_results& results, text_sink& out, text_sink* dotplot) {
    const query_strands& searched_queries = queries.shown;
    const sequence_set& empty_reads = *queries.empty_reads;
    const std::span<const std::size_t> empty_at = queries.empty_at;
    query_strands all;
    all.search_plus = searched_queries.search_plus;
    all.search_minus = searched_queries.search_minus;
    all.plus.source = searched_queries.plus.source;
    all.minus.source = searched_queries.minus.source;
    all.plus.encoded = searched_queries.plus.encoded;
    all.minus.encoded = searched_queries.minus.encoded;
    std::vector<std::vector<printed_hit>> hits;
    std::vector<std::vector<strand_hit>> kept;
    std::optional<sequence_set> letters;
    if (queries.letters) letters.emplace();
    const std::size_t n = searched_queries.size() + empty_at.size();
    for (std::size_t k = 0, e = 0, q = 0; k < n; ++k) {
        if (e < empty_at.size() && empty_at[e] == k) {
            all.plus.add_record(empty_reads, e);
            if (letters) letters->add(empty_reads.names[e], empty_reads[e]);
            if (all.search_minus) all.minus.add_record(empty_reads, e);
            hits.emplace_back();
            kept.emplace_back();
            ++e;
            continue;
        }
        all.plus.add_record(searched_queries.plus, q);
        if (letters) letters->add((*queries.letters).names[q], (*queries.letters)[q]);
        if (all.search_minus) all.minus.add_record(searched_queries.minus, q);
        hits.push_back(results.hits[q]);
        kept.push_back(q < results.scan.hits.size() ? results.scan.hits[q] : std::vector<strand_hit>{});
        ++q;
    }
    results_view view{sc, all, results.scan, hits, kept, statistics_of(results)};
    view.query_letters = letters ? &*letters : nullptr;
    view.split_reads = settings.split_reads;
    write_results(settings.format, header_of(settings, queries.source), view, out);
    if (dotplot) write_dotplot(results_view{sc, all, results.scan, hits}, *dotplot);
}

}  // namespace

void write_report(const report_settings& settings, const report_queries& queries, const scoring& sc,
                  const search_results& results, text_sink& out, text_sink* dotplot) {
    if (!queries.empty_at.empty()) return write_with_empty(settings, queries, sc, results, out, dotplot);
    const std::span<const std::vector<strand_hit>> searched(results.scan.hits);
    results_view view{sc, queries.shown, results.scan, results.hits, searched, statistics_of(results)};
    view.query_letters = queries.letters;
    view.split_reads = settings.split_reads;
    write_results(settings.format, header_of(settings, queries.source), view, out);
    if (dotplot) write_dotplot(results_view{sc, queries.shown, results.scan, results.hits}, *dotplot);
}

std::string report_text(const report_settings& settings, const report_queries& queries, const scoring& sc,
                        const search_results& results) {
    text_buffer text;
    write_report(settings, queries, sc, results, text);
    return std::move(text).text();
}

void write_batch_reports(const report_settings& settings, const query_strands& shown, const scoring& sc,
                         const search_results& results, std::span<const batch_file> files) {
    const std::span<const std::vector<strand_hit>> searched(results.scan.hits);
    const auto& hits = results.hits;
    for (const batch_file& f : files) {
        const std::size_t b = f.first, e = f.end;
        query_strands part;
        part.search_plus = shown.search_plus;
        part.search_minus = shown.search_minus;
        part.plus.source = f.query;
        part.minus.source = f.query;
        part.plus.encoded = shown.plus.encoded;
        part.minus.encoded = shown.minus.encoded;
        for (std::size_t q = b; q < e; ++q) {
            part.plus.add_record(shown.plus, q);
            if (shown.search_minus) part.minus.add(shown.minus.names[q], shown.minus[q]);
        }
        const std::vector<std::vector<printed_hit>> part_hits(hits.begin() + static_cast<std::ptrdiff_t>(b),
                                                              hits.begin() + static_cast<std::ptrdiff_t>(e));
        output_file file(f.out);
        results_view view{sc, part, results.scan, part_hits, searched.subspan(b, e - b), statistics_of(results)};
        view.split_reads = settings.split_reads;
        write_results(settings.format, header_of(settings, f.query), view, file);
        file.commit();
    }
}

std::string scan_summary(const std::string& db, const database_scan& scan, const scan_times& t) {
    return "database " + db + ": " + std::to_string(scan.sequences) + " sequences, " + std::to_string(scan.residues) +
           " residues, " + std::to_string(scan.chunks) + " chunk(s); score pass " + seconds(t.scanned - t.started) +
           " (backend " + seconds(scan.backend_s) + ", waiting for the reader " + seconds(scan.reader_wait_s) +
           ", of which for the first chunk " + seconds(scan.first_chunk_wait_s) + "; the reader read " +
           seconds(scan.read_s) +
           (t.encodes_while_reading ? " (encoding as it read)" : ", encoded " + seconds(scan.encode_s)) +
           ", prepared " + seconds(scan.prepare_s) + "; start-up before the scan " +
           seconds(scan.began > t.started ? std::chrono::duration<double>(scan.began - t.started).count() : 0.0) +
           (t.gpus_started_after ? ", GPUs started " + seconds(*t.gpus_started_after) + " after the start"
                                 : std::string()) +
           ", keeping hit subjects " + seconds(scan.keep_subjects_s) + ")";
}

std::string long_pairs_summary(std::size_t pairs, double secs, double cells) {
    return std::to_string(pairs) + " long pair(s) aligned pairwise: " + seconds(secs) + ", " +
           std::to_string(cells / std::max(secs, 1e-9) / 1e9) + " GCUPS";
}

std::string written_summary(const search_results& results, const std::string& written_to, bool alignments,
                            std::chrono::steady_clock::duration finishing, const search_devices::aligned_on_device& on_gpu,
                            std::size_t queries, std::chrono::steady_clock::duration output) {
    std::size_t printed = 0;
    for (const auto& h : results.hits) printed += h.size();
    std::string text = (alignments ? "alignments " : "E-values (the format prints no alignment) ") + seconds(finishing) +
                       " after the score pass";
    if (on_gpu.pairs > 0)
        text += " (" + std::to_string(on_gpu.pairs) + " on the GPU in " + seconds(on_gpu.total_s) + ", kernel " +
                seconds(on_gpu.kernel_s) + ")";
    if (results.queries_finished_during_search > 0)
        text += " (" + std::to_string(results.queries_finished_during_search) + " of " + std::to_string(queries) +
                " queries finished during it)";
    return std::to_string(printed) + " hits written to " + written_to + "; " + text + ", output " + seconds(output);
}

}  // namespace swgpu::io
