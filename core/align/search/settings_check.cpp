#include "core/align/search/settings_check.hpp"

#include "core/error.hpp"

namespace swgpu {

namespace {

// The words of a face's messages besides the settings' names.
struct face_words {
    std::string_view sequences;  // what the type of is checked: the command line's queries, the library's sequences
    std::string_view give;       // "or give --seqtype dna" / "or type dna"
    std::string_view unset;      // how a setting is left to its default: an option not given; the library's -1
};

face_words words(settings_face face) {
    if (face == settings_face::command_line) return {"queries", "give ", ""};
    return {"sequences", "", "-1"};
}

std::string name(setting s, settings_face face) { return std::string(name_of(s, face)); }

// A masking switched on: the command line's "--seg yes", the library's "seg".
std::string switched_on(setting s, settings_face face) {
    return name(s, face) + (face == settings_face::command_line ? " yes" : "");
}

// The value given, and the library's value that leaves the setting to its default.
std::string got(std::int64_t value, settings_face face, std::string_view unset_means) {
    const face_words w = words(face);
    std::string text = "(got " + std::to_string(value);
    if (!w.unset.empty()) text += "; " + std::string(w.unset) + ": " + std::string(unset_means);
    return text + ")";
}

}  // namespace

std::string_view name_of(setting s, settings_face face) {
    for (const setting_name& n : setting_names)
        if (n.key == s) return face == settings_face::command_line ? n.command_line : n.library;
    return {};
}

void check_search_limits(const search_values& v, settings_face face) {
    const auto n = [face](setting s) { return name(s, face); };
    if (v.max_target_seqs < 1)
        throw usage_error(n(setting::max_target_seqs) + " must be at least 1 (got " + std::to_string(v.max_target_seqs) +
                          ")");
    if (!(v.evalue > 0)) throw usage_error(n(setting::evalue) + " must be positive");
    if (v.db_chunk && *v.db_chunk < 1)
        throw usage_error(n(setting::db_chunk) + " must be at least 1 residue (got " + std::to_string(*v.db_chunk) + ")");
    if (v.gpus < 0)
        throw usage_error(n(setting::gpus) + " must be 0 (every GPU) or more (got " + std::to_string(v.gpus) + ")");
}

void check_scoring_settings(const search_values& v, settings_face face) {
    const auto n = [face](setting s) { return name(s, face); };
    if (v.gap_open && *v.gap_open < 0)
        throw usage_error(n(setting::gap_open) + " must be >= 0 " + got(*v.gap_open, face, "the matrix's default"));
    if (v.gap_extend && *v.gap_extend < 1)
        throw usage_error(n(setting::gap_extend) + " must be >= 1 " + got(*v.gap_extend, face, "the matrix's default"));
    if (v.comp_based_stats == 1 && !v.evalues)
        throw usage_error(n(setting::comp_based_stats) + " 1 adjusts E-values; it does not go with " +
                          n(setting::no_evalue));
    if (v.max_hsps < 1)
        throw usage_error(n(setting::max_hsps) + " must be at least 1 (got " + std::to_string(v.max_hsps) + ")");
    if (v.zdrop && *v.zdrop < 0)
        throw usage_error(n(setting::zdrop) + " must be 0 or more " + got(*v.zdrop, face, "not cut") +
                          ": the score drop, beyond what one gap explains, at which an alignment is cut");
}

void check_settings_for_type(const search_values& v, seq_type type, settings_face face) {
    const auto n = [face](setting s) { return name(s, face); };
    const face_words w = words(face);
    const std::string are = ", but the " + std::string(w.sequences) + " are ";
    if (type == seq_type::protein) {
        if (v.match_given)
            throw usage_error(n(setting::match_mismatch) + " score DNA" + are + "protein; use --matrix, or " +
                              n(setting::seqtype) + " dna");
        if (v.strand_given)
            throw usage_error(n(setting::strand) + " applies to DNA" + are + "protein; or " + std::string(w.give) +
                              n(setting::seqtype) + " dna");
        if (v.dust)
            throw usage_error(n(setting::dust) + " masks DNA" + are + "protein; use " + switched_on(setting::seg, face) +
                              ", or " + n(setting::seqtype) + " dna");
        if (v.zdrop)
            throw usage_error(n(setting::zdrop) + " cuts DNA alignments into collinear blocks" + are + "protein; or " +
                              std::string(w.give) + n(setting::seqtype) + " dna");
    } else if (v.seg) {
        throw usage_error(n(setting::seg) + " masks protein" + are + "DNA; use " + switched_on(setting::dust, face) +
                          ", or " + n(setting::seqtype) + " protein");
    } else if (v.comp_based_stats == 1) {
        throw usage_error(n(setting::comp_based_stats) + " 1 applies to protein" + are + "DNA");
    }
}

}  // namespace swgpu
