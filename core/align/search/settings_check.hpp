// The checks of a search's settings that every face makes (the command line's `swgpu align` and the library's
// search_settings, Python's keywords through it), written once: each face gives the values it holds and is answered
// in its own words, the settings named as it names them (the table below: the command line's option, the library's
// field). What one face's parser checks already (choices, ranges of counts) stays there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/align/scoring.hpp"

namespace swgpu {

enum class settings_face : std::uint8_t { command_line, library };

// The settings the checks name, and each one's name on each face.
enum class setting : std::uint8_t {
    max_target_seqs, evalue, no_evalue, db_chunk, gpus, gap_open, gap_extend, comp_based_stats, max_hsps, zdrop, seg,
    dust, match_mismatch, strand, seqtype,
};

struct setting_name {
    setting key;
    std::string_view command_line, library;
};

inline constexpr setting_name setting_names[] = {
    {setting::max_target_seqs, "-k/--max-target-seqs", "max_target_seqs"},
    {setting::evalue, "-e/--evalue", "evalue"},
    {setting::no_evalue, "--no-evalue", "evalues off"},
    {setting::db_chunk, "--db-chunk", "db_chunk"},
    {setting::gpus, "--gpus", "gpus"},
    {setting::gap_open, "--gap-open", "gap_open"},
    {setting::gap_extend, "--gap-extend", "gap_extend"},
    {setting::comp_based_stats, "--comp-based-stats", "comp_based_stats"},
    {setting::max_hsps, "--max-hsps", "max_hsps"},
    {setting::zdrop, "--zdrop", "zdrop"},
    {setting::seg, "--seg", "seg"},
    {setting::dust, "--dust", "dust"},
    {setting::match_mismatch, "--match/--mismatch", "match/mismatch"},
    {setting::strand, "--strand", "strand"},
    {setting::seqtype, "--seqtype", "type"},
};

// `s` as `face` names it.
std::string_view name_of(setting s, settings_face face);

// The values the checks read, as a face holds them.
struct search_values {
    std::int64_t max_target_seqs = 500;
    double evalue = 10;
    bool evalues = true;                   // false: no statistics (--no-evalue)
    std::optional<std::int64_t> db_chunk;  // residues per database chunk (the command line's)
    int gpus = 0;
    std::optional<int> gap_open, gap_extend;  // none: the matrix's default
    int comp_based_stats = 0;
    int max_hsps = 1;
    std::optional<int> zdrop;              // none: alignments not cut
    bool seg = false, dust = false;        // masking asked for
    bool match_given = false, strand_given = false;  // DNA scores, strands given (the command line's)
};

// What is kept and where it runs: max_target_seqs, evalue, db_chunk, gpus. Throws usage_error.
void check_search_limits(const search_values& v, settings_face face);
// How it is scored and aligned: gap costs, comp_based_stats with E-values, max_hsps, zdrop. Throws usage_error.
void check_scoring_settings(const search_values& v, settings_face face);
// What the settings ask of sequences of type `type` (masking, composition and Z-drop of one type only; DNA scores and
// strands). Throws usage_error.
void check_settings_for_type(const search_values& v, seq_type type, settings_face face);

}  // namespace swgpu
