// The checks of a search's settings both faces make (core/align/search/settings_check.hpp): the same check on the
// command line and in the library, each in its own names.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "core/align/search/settings_check.hpp"
#include "core/error.hpp"

using namespace swgpu;

namespace {

// The message of the check `call` fails, or "" when it passes.
template <class Call>
std::string message_of(Call&& call) {
    try {
        call();
    } catch (const error& e) {
        CHECK(e.code() == exit_code::bad_command_line);
        return e.what();
    }
    return {};
}

std::string both(const search_values& v, settings_face face) {
    return message_of([&] {
        check_search_limits(v, face);
        check_scoring_settings(v, face);
    });
}

}  // namespace

TEST_CASE("settings check: every setting named on both faces, each name once", "[settings]") {
    std::set<std::string_view> cli, library;
    for (const setting_name& n : setting_names) {
        CHECK(!n.command_line.empty());
        CHECK(!n.library.empty());
        CHECK(cli.insert(n.command_line).second);
        CHECK(library.insert(n.library).second);
        CHECK(name_of(n.key, settings_face::command_line) == n.command_line);
        CHECK(name_of(n.key, settings_face::library) == n.library);
    }
    CHECK(name_of(setting::evalue, settings_face::command_line) == "-e/--evalue");
    CHECK(name_of(setting::evalue, settings_face::library) == "evalue");
}

TEST_CASE("settings check: the command line's messages, and the library's in its own names", "[settings]") {
    const search_values fine;
    CHECK(both(fine, settings_face::command_line).empty());
    CHECK(both(fine, settings_face::library).empty());
    struct bad {
        search_values v;
        std::string command_line, library;
    };
    std::vector<bad> cases(9);
    cases[0].v.max_target_seqs = 0;
    cases[0].command_line = "-k/--max-target-seqs must be at least 1 (got 0)";
    cases[0].library = "max_target_seqs must be at least 1 (got 0)";
    cases[1].v.evalue = 0;
    cases[1].command_line = "-e/--evalue must be positive";
    cases[1].library = "evalue must be positive";
    cases[2].v.gpus = -1;
    cases[2].command_line = "--gpus must be 0 (every GPU) or more (got -1)";
    cases[2].library = "gpus must be 0 (every GPU) or more (got -1)";
    cases[3].v.gap_open = -5;
    cases[3].command_line = "--gap-open must be >= 0 (got -5)";
    cases[3].library = "gap_open must be >= 0 (got -5; -1: the matrix's default)";
    cases[4].v.gap_extend = 0;
    cases[4].command_line = "--gap-extend must be >= 1 (got 0)";
    cases[4].library = "gap_extend must be >= 1 (got 0; -1: the matrix's default)";
    cases[5].v.comp_based_stats = 1;
    cases[5].v.evalues = false;
    cases[5].command_line = "--comp-based-stats 1 adjusts E-values; it does not go with --no-evalue";
    cases[5].library = "comp_based_stats 1 adjusts E-values; it does not go with evalues off";
    cases[6].v.max_hsps = 0;
    cases[6].command_line = "--max-hsps must be at least 1 (got 0)";
    cases[6].library = "max_hsps must be at least 1 (got 0)";
    cases[7].v.zdrop = -2;
    cases[7].command_line =
        "--zdrop must be 0 or more (got -2): the score drop, beyond what one gap explains, at which an alignment is cut";
    cases[7].library = "zdrop must be 0 or more (got -2; -1: not cut): the score drop, beyond what one gap explains, at "
                       "which an alignment is cut";
    cases[8].v.db_chunk = 0;
    cases[8].command_line = "--db-chunk must be at least 1 residue (got 0)";
    cases[8].library = "db_chunk must be at least 1 residue (got 0)";
    for (const bad& b : cases) {
        CHECK(both(b.v, settings_face::command_line) == b.command_line);
        CHECK(both(b.v, settings_face::library) == b.library);
    }
}

TEST_CASE("settings check: what the settings ask of one type of sequences, in each face's words", "[settings]") {
    const auto typed = [](const search_values& v, seq_type t, settings_face face) {
        return message_of([&] { check_settings_for_type(v, t, face); });
    };
    search_values dust;
    dust.dust = true;
    CHECK(typed(dust, seq_type::dna, settings_face::command_line).empty());
    CHECK(typed(dust, seq_type::protein, settings_face::command_line) ==
          "--dust masks DNA, but the queries are protein; use --seg yes, or --seqtype dna");
    CHECK(typed(dust, seq_type::protein, settings_face::library) ==
          "dust masks DNA, but the sequences are protein; use seg, or type dna");
    search_values seg;
    seg.seg = true;
    CHECK(typed(seg, seq_type::protein, settings_face::library).empty());
    CHECK(typed(seg, seq_type::dna, settings_face::command_line) ==
          "--seg masks protein, but the queries are DNA; use --dust yes, or --seqtype protein");
    CHECK(typed(seg, seq_type::dna, settings_face::library) ==
          "seg masks protein, but the sequences are DNA; use dust, or type protein");
    search_values zdrop;
    zdrop.zdrop = 100;
    CHECK(typed(zdrop, seq_type::protein, settings_face::command_line) ==
          "--zdrop cuts DNA alignments into collinear blocks, but the queries are protein; or give --seqtype dna");
    CHECK(typed(zdrop, seq_type::protein, settings_face::library) ==
          "zdrop cuts DNA alignments into collinear blocks, but the sequences are protein; or type dna");
    search_values composition;
    composition.comp_based_stats = 1;
    CHECK(typed(composition, seq_type::dna, settings_face::command_line) ==
          "--comp-based-stats 1 applies to protein, but the queries are DNA");
    CHECK(typed(composition, seq_type::dna, settings_face::library) ==
          "comp_based_stats 1 applies to protein, but the sequences are DNA");
    search_values scores;
    scores.match_given = true;
    CHECK(typed(scores, seq_type::protein, settings_face::command_line) ==
          "--match/--mismatch score DNA, but the queries are protein; use --matrix, or --seqtype dna");
    search_values strand;
    strand.strand_given = true;
    CHECK(typed(strand, seq_type::protein, settings_face::command_line) ==
          "--strand applies to DNA, but the queries are protein; or give --seqtype dna");
}
