// What `swgpu align` writes after its search (io/align/report.hpp): report_text gives the program's bytes, and a query
// file's zero-length reads go back to their places without hits.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tests/cli_support.hpp"
#include "core/align/search/session.hpp"
#include "core/align/strand.hpp"
#include "io/align/matrix_file.hpp"
#include "io/align/report.hpp"
#include "io/align/sequence_reader.hpp"

using namespace swgpu;
using namespace swgpu::testing;

namespace {

const std::string demo_dir = std::string(SWGPU_SOURCE_DIR) + "/data/";

// The demo queries searched against the demo database in this process, as `swgpu align` searches them (CPU, 2 threads).
struct demo_search {
    scoring sc = io::make_scoring(io::scoring_request{});
    query_strands queries;
    query_masking masking;
    std::unique_ptr<search_session> session;
    std::unique_ptr<resident_records> records;
    search_results results;

    explicit demo_search(const io::output_format& fmt) {
        search_session::options o;
        o.threads = 2;
        o.alignments = io::needs_alignments(fmt);
        session = std::make_unique<search_session>(std::move(o), std::chrono::steady_clock::now());
        session->compose(sc);
        queries.plus = io::read_all(demo_dir + "demo_queries.fa");
        encode(queries.plus, sc.matrix);
        sequence_set db = io::read_all(demo_dir + "demo_db.fa");
        const std::uint64_t unknown = encode(db, sc.matrix);
        records = std::make_unique<resident_records>(std::move(db), unknown);
        results = session->search(queries, masking, *records, 0);
    }
};

}  // namespace

TEST_CASE("report_text: the bytes swgpu align prints for the same search", "[output]") {
    const std::string about = run_program("--version").out;  // "swgpu X.Y.Z (...)": the version pair's header names
    const std::string version = about.substr(6, about.find(' ', 6) - 6);
    for (const std::string outfmt : {"6", "6 std qseq sseq nident positive gaps", "pair", "json"}) {
        INFO(outfmt);
        io::report_settings settings;
        settings.format = io::parse_outfmt(outfmt);
        settings.version = version;
        settings.db_source = demo_dir + "demo_db.fa";
        const demo_search s(settings.format);
        const io::report_queries queries{demo_dir + "demo_queries.fa", s.masking.shown(s.queries)};
        const std::string text = io::report_text(settings, queries, s.sc, s.results);
        const program_result cli = run_program("align '" + demo_dir + "demo_queries.fa' '" + demo_dir +
                                               "demo_db.fa' -t 2 --outfmt '" + outfmt + "'");
        REQUIRE(cli.code == 0);
        CHECK(!text.empty());
        CHECK(text == cli.out);
    }
}

TEST_CASE("write_report: a query file's zero-length reads back in their places, without hits", "[output]") {
    io::report_settings settings;
    settings.format = io::parse_outfmt("sam");
    const demo_search s(settings.format);
    sequence_set empty;
    empty.add("empty_first", "");
    empty.add("empty_third", "");
    const std::vector<std::size_t> at{0, 2};
    const io::report_queries queries{"queries.fa", s.masking.shown(s.queries), nullptr, at, &empty};
    io::text_buffer out;
    io::write_report(settings, queries, s.sc, s.results, out);
    std::vector<std::string> names;
    for (const std::string& line : lines_of(out.text()))
        if (!line.empty() && line[0] != '@') {
            const std::string name = fields_of(line).at(0);
            if (names.empty() || names.back() != name) names.push_back(name);
        }
    REQUIRE(names.size() == s.queries.size() + 2);
    CHECK(names[0] == "empty_first");
    CHECK(names[1] == s.queries.plus.names[0]);
    CHECK(names[2] == "empty_third");
    CHECK(names[3] == s.queries.plus.names[1]);
    for (const std::string& line : lines_of(out.text()))
        if (line.rfind("empty_", 0) == 0) CHECK(fields_of(line).at(1) == "4");  // unmapped
}
