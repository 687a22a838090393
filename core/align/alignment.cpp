#include "core/align/alignment.hpp"

namespace swgpu {

std::string cigar_string(std::span<const cigar_op> ops) {
    std::string s;
    for (const auto& o : ops) {
        s += std::to_string(o.len);
        s += o.op;
    }
    return s;
}

int rescore(const alignment& a, std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
            const scoring& sc) {
    if (a.ops.empty()) return 0;
    int score = 0;
    auto i = a.query_begin, j = a.subject_begin;
    for (const auto& o : a.ops) {
        if (o.op == 'M') {
            for (std::uint32_t k = 0; k < o.len; ++k) score += sc.matrix.score(query[i++], subject[j++]);
        } else {
            score -= sc.gaps.open + static_cast<int>(o.len) * sc.gaps.extend;
            (o.op == 'I' ? i : j) += o.len;
        }
    }
    return score;
}

alignment_stats stats_of(const alignment& a, std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                         const substitution_matrix& m) {
    alignment_stats st;
    auto i = a.query_begin, j = a.subject_begin;
    for (const auto& o : a.ops) {
        st.columns += o.len;
        if (o.op == 'M') {
            for (std::uint32_t k = 0; k < o.len; ++k, ++i, ++j) {
                if (query[i] == subject[j]) ++st.identities;
                else ++st.mismatches;
                if (m.score(query[i], subject[j]) > 0) ++st.positives;
            }
        } else {
            ++st.gap_opens;
            st.gaps += o.len;
            (o.op == 'I' ? i : j) += o.len;
        }
    }
    return st;
}

std::pair<std::string, std::string> aligned_rows(const alignment& a, std::span<const std::uint8_t> query,
                                                 std::span<const std::uint8_t> subject, const substitution_matrix& m) {
    std::string q, s;
    auto i = a.query_begin, j = a.subject_begin;
    for (const auto& o : a.ops) {
        for (std::uint32_t k = 0; k < o.len; ++k) {
            q += o.op == 'D' ? '-' : m.letter(query[i++]);
            s += o.op == 'I' ? '-' : m.letter(subject[j++]);
        }
    }
    return {q, s};
}

}  // namespace swgpu
