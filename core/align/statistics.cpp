#include "core/align/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <string_view>

#include "core/error.hpp"

namespace swgpu {

namespace {

// One row of NCBI's parameter tables (blast_stat.c, arrays blosum45_values ... pam250_values): gap open and extend in
// BLAST's convention, then λ, K, H, a (alpha), the table's β, Spouge's C, α_v and σ.
struct table_row {
    int open, extend;
    double lambda, K, H, alpha, beta, C, alpha_v, sigma;
};

struct matrix_table {
    const char* name;
    // The ungapped row's a and α_v enter Spouge's intercepts.
    double alpha_ungapped, alpha_v_ungapped;
    std::vector<table_row> rows;
};

const std::vector<matrix_table>& tables() {
    static const std::vector<matrix_table> t = {
        {"BLOSUM45", 0.9113, 9.611060,
         {
             {13, 3, 0.207, 0.049, 0.14, 1.5, -22, 0.671128, 35.855900, 35.963900},
             {12, 3, 0.199, 0.039, 0.11, 1.8, -34, 0.691530, 45.693600, 45.851700},
             {11, 3, 0.190, 0.031, 0.095, 2.0, -38, 0.691181, 62.874100, 63.103700},
             {10, 3, 0.179, 0.023, 0.075, 2.4, -51, 0.710529, 88.286800, 88.639100},
             {16, 2, 0.210, 0.051, 0.14, 1.5, -24, 0.666680, 36.279800, 36.452400},
             {15, 2, 0.203, 0.041, 0.12, 1.7, -31, 0.673871, 44.825700, 45.060400},
             {14, 2, 0.195, 0.032, 0.10, 1.9, -36, 0.685753, 60.736200, 61.102300},
             {13, 2, 0.185, 0.024, 0.084, 2.2, -45, 0.698480, 85.148100, 85.689400},
             {12, 2, 0.171, 0.016, 0.061, 2.8, -65, 0.713429, 127.758000, 128.582000},
             {19, 1, 0.205, 0.040, 0.11, 1.9, -43, 0.672302, 53.071400, 53.828200},
             {18, 1, 0.198, 0.032, 0.10, 2.0, -43, 0.682580, 72.342400, 73.403900},
             {17, 1, 0.189, 0.024, 0.079, 2.4, -57, 0.695035, 103.055000, 104.721000},
             {16, 1, 0.176, 0.016, 0.063, 2.8, -67, 0.712966, 170.100000, 173.003000},
         }},
        {"BLOSUM50", 0.6895, 5.388310,
         {
             {13, 3, 0.212, 0.063, 0.19, 1.1, -16, 0.639287, 18.113800, 18.202800},
             {12, 3, 0.206, 0.055, 0.17, 1.2, -18, 0.644715, 22.654600, 22.777700},
             {11, 3, 0.197, 0.042, 0.14, 1.4, -25, 0.656327, 29.861100, 30.045700},
             {10, 3, 0.186, 0.031, 0.11, 1.7, -34, 0.671150, 42.393800, 42.674000},
             {9, 3, 0.172, 0.022, 0.082, 2.1, -48, 0.694326, 66.069600, 66.516400},
             {16, 2, 0.215, 0.066, 0.20, 1.05, -15, 0.633899, 17.951800, 18.092100},
             {15, 2, 0.210, 0.058, 0.17, 1.2, -20, 0.641985, 21.940100, 22.141800},
             {14, 2, 0.202, 0.045, 0.14, 1.4, -27, 0.650682, 28.681200, 28.961900},
             {13, 2, 0.193, 0.035, 0.12, 1.6, -32, 0.660984, 42.059500, 42.471600},
             {12, 2, 0.181, 0.025, 0.095, 1.9, -41, 0.678090, 63.747600, 64.397300},
             {19, 1, 0.212, 0.057, 0.18, 1.2, -21, 0.635714, 26.311200, 26.923300},
             {18, 1, 0.207, 0.050, 0.15, 1.4, -28, 0.643523, 34.903700, 35.734800},
             {17, 1, 0.198, 0.037, 0.12, 1.6, -33, 0.654504, 48.895800, 50.148600},
             {16, 1, 0.186, 0.025, 0.10, 1.9, -42, 0.667750, 76.469100, 78.443000},
             {15, 1, 0.171, 0.015, 0.063, 2.7, -76, 0.694575, 140.053000, 144.160000},
         }},
        {"BLOSUM62", 0.7916, 4.964660,
         {
             {11, 2, 0.297, 0.082, 0.27, 1.1, -10, 0.641766, 12.673800, 12.757600},
             {10, 2, 0.291, 0.075, 0.23, 1.3, -15, 0.649362, 16.474000, 16.602600},
             {9, 2, 0.279, 0.058, 0.19, 1.5, -19, 0.659245, 22.751900, 22.950000},
             {8, 2, 0.264, 0.045, 0.15, 1.8, -26, 0.672692, 35.483800, 35.821300},
             {7, 2, 0.239, 0.027, 0.10, 2.5, -46, 0.702056, 61.238300, 61.886000},
             {6, 2, 0.201, 0.012, 0.061, 3.3, -58, 0.740802, 140.417000, 141.882000},
             {13, 1, 0.292, 0.071, 0.23, 1.2, -11, 0.647715, 19.506300, 19.893100},
             {12, 1, 0.283, 0.059, 0.19, 1.5, -19, 0.656391, 27.856200, 28.469900},
             {11, 1, 0.267, 0.041, 0.14, 1.9, -30, 0.669720, 42.602800, 43.636200},
             {10, 1, 0.243, 0.024, 0.10, 2.5, -44, 0.693267, 83.178700, 85.065600},
             {9, 1, 0.206, 0.010, 0.052, 4.0, -87, 0.731887, 210.333000, 214.842000},
         }},
        {"BLOSUM80", 0.5222, 1.918130,
         {
             {25, 2, 0.342, 0.17, 0.66, 0.52, -1.6, 0.563956, 1.731000, 1.731300},
             {13, 2, 0.336, 0.15, 0.57, 0.59, -3, 0.570979, 2.673470, 2.692300},
             {9, 2, 0.319, 0.11, 0.42, 0.76, -6, 0.587837, 5.576090, 5.667860},
             {8, 2, 0.308, 0.090, 0.35, 0.89, -9, 0.597556, 7.536950, 7.686230},
             {7, 2, 0.293, 0.070, 0.27, 1.1, -14, 0.615254, 11.586600, 11.840400},
             {6, 2, 0.268, 0.045, 0.19, 1.4, -19, 0.644054, 19.958100, 20.441200},
             {11, 1, 0.314, 0.095, 0.35, 0.90, -9, 0.590702, 8.808610, 9.223320},
             {10, 1, 0.299, 0.071, 0.27, 1.1, -14, 0.609620, 13.833800, 14.533400},
             {9, 1, 0.279, 0.048, 0.20, 1.4, -19, 0.623800, 24.252000, 25.490400},
         }},
        {"BLOSUM90", 0.4434, 1.377760,
         {
             {9, 2, 0.310, 0.12, 0.46, 0.67, -6, 0.570267, 4.232290, 4.334170},
             {8, 2, 0.300, 0.099, 0.39, 0.76, -7, 0.581580, 5.797020, 5.961420},
             {7, 2, 0.283, 0.072, 0.30, 0.93, -11, 0.600024, 9.040880, 9.321600},
             {6, 2, 0.259, 0.048, 0.22, 1.2, -16, 0.629344, 16.024400, 16.531600},
             {11, 1, 0.302, 0.093, 0.39, 0.78, -8, 0.576919, 7.143250, 7.619190},
             {10, 1, 0.290, 0.075, 0.28, 1.04, -15, 0.591366, 11.483900, 12.269800},
             {9, 1, 0.265, 0.044, 0.20, 1.3, -19, 0.613013, 21.408300, 22.840900},
         }},
        {"PAM30", 0.1938, 0.161818,
         {
             {7, 2, 0.305, 0.15, 0.87, 0.35, -3, 0.479087, 1.014010, 1.162730},
             {6, 2, 0.287, 0.11, 0.68, 0.42, -4, 0.499980, 1.688060, 1.951430},
             {5, 2, 0.264, 0.079, 0.45, 0.59, -7, 0.533009, 3.377010, 3.871950},
             {10, 1, 0.309, 0.15, 0.88, 0.35, -3, 0.474741, 1.372050, 1.788770},
             {9, 1, 0.294, 0.11, 0.61, 0.48, -6, 0.492716, 2.463920, 3.186150},
             {8, 1, 0.270, 0.072, 0.40, 0.68, -10, 0.521286, 5.368130, 6.763480},
         }},
        {"PAM70", 0.3250, 0.633439,
         {
             {8, 2, 0.301, 0.12, 0.54, 0.56, -5, 0.549019, 2.881650, 3.025710},
             {7, 2, 0.286, 0.093, 0.43, 0.67, -7, 0.565659, 4.534540, 4.785780},
             {6, 2, 0.264, 0.064, 0.29, 0.90, -12, 0.596330, 7.942630, 8.402720},
             {11, 1, 0.305, 0.12, 0.52, 0.59, -6, 0.543514, 3.681400, 4.108020},
             {10, 1, 0.291, 0.091, 0.41, 0.71, -9, 0.560723, 6.002970, 6.716570},
             {9, 1, 0.270, 0.060, 0.28, 0.97, -14, 0.585186, 11.360800, 12.636700},
         }},
        {"PAM250", 0.98, 11.754300,
         {
             {15, 3, 0.205, 0.049, 0.13, 1.6, -23, 0.687656, 34.578400, 34.928000},
             {14, 3, 0.200, 0.043, 0.12, 1.7, -26, 0.689768, 43.353000, 43.443800},
             {13, 3, 0.194, 0.036, 0.10, 1.9, -31, 0.697431, 50.948500, 51.081700},
             {12, 3, 0.186, 0.029, 0.085, 2.2, -41, 0.704565, 69.606500, 69.793600},
             {11, 3, 0.174, 0.020, 0.070, 2.5, -48, 0.722438, 98.653500, 98.927100},
             {17, 2, 0.204, 0.047, 0.12, 1.7, -28, 0.684799, 41.583800, 41.735800},
             {16, 2, 0.198, 0.038, 0.11, 1.8, -29, 0.691098, 51.635200, 51.843900},
             {15, 2, 0.191, 0.031, 0.087, 2.2, -44, 0.699051, 67.256700, 67.558500},
             {14, 2, 0.182, 0.024, 0.073, 2.5, -53, 0.714103, 96.315100, 96.756800},
             {13, 2, 0.171, 0.017, 0.059, 2.9, -64, 0.728738, 135.653000, 136.339000},
             {21, 1, 0.205, 0.045, 0.11, 1.8, -34, 0.683265, 48.728200, 49.218800},
             {20, 1, 0.199, 0.037, 0.10, 1.9, -35, 0.689380, 60.832000, 61.514100},
             {19, 1, 0.192, 0.029, 0.083, 2.3, -52, 0.696344, 84.019700, 84.985600},
             {18, 1, 0.183, 0.021, 0.070, 2.6, -60, 0.710525, 113.829000, 115.184000},
             {17, 1, 0.171, 0.014, 0.052, 3.3, -86, 0.727000, 175.071000, 177.196000},
         }},
    };
    return t;
}

// NCBI's tables for blastn's match/mismatch scoring (blast_stat.c, arrays blastn_values_R_P): for a reward R and
// penalty P, rows of gap open, gap extend, λ, K, H, alpha, beta. blastn has no Spouge parameters for DNA and computes
// Karlin-Altschul E-values with BLAST's length adjustment. For the tables marked `even_scores` (2/−3, 2/−5, 2/−7 and
// 3/−4, as blastn sets them), the parameters hold for even scores only and blastn rounds an odd score down to even
// before computing its E-value. Pairs outside the tables (blastn also takes gap costs above a table's largest with
// ungapped parameters, and reduces scores by their common divisor) are not supported here.
// The greedy (megablast) rows with open = extend = 0 mean a different gap model and are left out.
struct dna_row {
    int open, extend;
    double lambda, K, H, alpha, beta;
};

struct dna_table {
    int reward, penalty;  // penalty as a negative score, like substitution_matrix::match_mismatch
    bool even_scores;
    std::vector<dna_row> rows;
};

const std::vector<dna_table>& dna_tables() {
    static const std::vector<dna_table> t = {
        {1, -5, false, {{3, 3, 1.39, 0.747, 1.38, 1.00, 0}}},
        {1, -4, false,
         {{1, 2, 1.36, 0.67, 1.2, 1.1, 0},
          {0, 2, 1.26, 0.43, 0.90, 1.4, -1},
          {2, 1, 1.35, 0.61, 1.1, 1.2, -1},
          {1, 1, 1.22, 0.35, 0.72, 1.7, -3}}},
        {2, -7, true,
         {{2, 4, 0.68, 0.67, 1.2, 0.55, 0},
          {0, 4, 0.63, 0.43, 0.90, 0.7, -1},
          {4, 2, 0.675, 0.62, 1.1, 0.6, -1},
          {2, 2, 0.61, 0.35, 0.72, 1.7, -3}}},
        {1, -3, false,
         {{2, 2, 1.37, 0.70, 1.2, 1.1, 0},
          {1, 2, 1.35, 0.64, 1.1, 1.2, -1},
          {0, 2, 1.25, 0.42, 0.83, 1.5, -2},
          {2, 1, 1.34, 0.60, 1.1, 1.2, -1},
          {1, 1, 1.21, 0.34, 0.71, 1.7, -2}}},
        {2, -5, true,
         {{2, 4, 0.67, 0.59, 1.1, 0.6, -1},
          {0, 4, 0.62, 0.39, 0.78, 0.8, -2},
          {4, 2, 0.67, 0.61, 1.0, 0.65, -2},
          {2, 2, 0.56, 0.32, 0.59, 0.95, -4}}},
        {1, -2, false,
         {{2, 2, 1.33, 0.62, 1.1, 1.2, 0},
          {1, 2, 1.30, 0.52, 0.93, 1.4, -2},
          {0, 2, 1.19, 0.34, 0.66, 1.8, -3},
          {3, 1, 1.32, 0.57, 1.0, 1.3, -1},
          {2, 1, 1.29, 0.49, 0.92, 1.4, -1},
          {1, 1, 1.14, 0.26, 0.52, 2.2, -5}}},
        {2, -3, true,
         {{4, 4, 0.63, 0.42, 0.84, 0.75, -2},
          {2, 4, 0.615, 0.37, 0.72, 0.85, -3},
          {0, 4, 0.55, 0.21, 0.46, 1.2, -5},
          {3, 3, 0.615, 0.37, 0.68, 0.9, -3},
          {6, 2, 0.63, 0.42, 0.84, 0.75, -2},
          {5, 2, 0.625, 0.41, 0.78, 0.8, -2},
          {4, 2, 0.61, 0.35, 0.68, 0.9, -3},
          {2, 2, 0.515, 0.14, 0.33, 1.55, -9}}},
        {3, -4, true,
         {{6, 3, 0.389, 0.25, 0.56, 0.7, -5},
          {5, 3, 0.375, 0.21, 0.47, 0.8, -6},
          {4, 3, 0.351, 0.14, 0.35, 1.0, -9},
          {6, 2, 0.362, 0.16, 0.45, 0.8, -4},
          {5, 2, 0.330, 0.092, 0.28, 1.2, -13},
          {4, 2, 0.281, 0.046, 0.16, 1.8, -23}}},
        {4, -5, false,
         {{6, 5, 0.28, 0.21, 0.47, 0.6, -7},
          {5, 5, 0.27, 0.17, 0.39, 0.7, -9},
          {4, 5, 0.25, 0.10, 0.31, 0.8, -10},
          {3, 5, 0.23, 0.065, 0.25, 0.9, -11}}},
        {1, -1, false,
         {{3, 2, 1.09, 0.31, 0.55, 2.0, -2},
          {2, 2, 1.07, 0.27, 0.49, 2.2, -3},
          {1, 2, 1.02, 0.21, 0.36, 2.8, -6},
          {0, 2, 0.80, 0.064, 0.17, 4.8, -16},
          {4, 1, 1.08, 0.28, 0.54, 2.0, -2},
          {3, 1, 1.06, 0.25, 0.46, 2.3, -4},
          {2, 1, 0.99, 0.17, 0.30, 3.3, -10}}},
        {3, -2, false, {{5, 5, 0.208, 0.030, 0.072, 2.9, -47}}},
        {5, -4, false, {{10, 6, 0.163, 0.068, 0.16, 1.0, -19}, {8, 6, 0.146, 0.039, 0.11, 1.3, -29}}},
    };
    return t;
}

gumbel_params make_params(const matrix_table& m, const table_row& r) {
    gumbel_params p;
    p.lambda = r.lambda;
    p.K = r.K;
    p.H = r.H;
    p.alpha = r.alpha;
    p.beta = r.beta;
    p.C = r.C;
    p.alpha_v = r.alpha_v;
    p.sigma = r.sigma;
    const double G = r.open + r.extend;
    p.b = 2.0 * G * (m.alpha_ungapped - r.alpha);
    p.beta_v = 2.0 * G * (m.alpha_v_ungapped - r.alpha_v);
    p.tau = 2.0 * G * (m.alpha_v_ungapped - r.sigma);
    return p;
}

// The statistics depend on the scores of the 20 standard amino acids; B, Z, J, X and * (rare, and scored differently
// in older copies of the same matrix) do not change them.
constexpr std::string_view standard_amino_acids = "ARNDCQEGHILKMFPSTWYV";

bool same_standard_scores(const substitution_matrix& a, const substitution_matrix& b) {
    for (char x : standard_amino_acids) {
        if (!a.known(x) || !b.known(x)) return false;
        for (char y : standard_amino_acids)
            if (a.score(a.code(x), a.code(y)) != b.score(b.code(x), b.code(y))) return false;
    }
    return true;
}

// The table of the NCBI matrix whose standard scores `m` has, or nullptr.
const matrix_table* recognise(const substitution_matrix& m) {
    for (const auto& t : tables()) {
        const substitution_matrix ncbi = substitution_matrix::builtin(t.name);
        if (same_standard_scores(m, ncbi)) return &t;
    }
    return nullptr;
}

const table_row* find_row(const matrix_table& t, const gap_costs& g) {
    for (const auto& r : t.rows)
        if (r.open == g.open && r.extend == g.extend) return &r;
    return nullptr;
}

std::string pairs_of(const matrix_table& t) {
    std::string s = std::string(t.name) + ":";
    for (const auto& r : t.rows) {
        s += ' ';
        s += std::to_string(r.open);
        s += '/';
        s += std::to_string(r.extend);
    }
    return s;
}

// The blastn table of DNA scoring that gives every pair of distinct bases of A C G T one mismatch score and every
// base itself one match score, or nullptr. N and other letters do not enter (BLAST scores them its own way).
const dna_table* recognise_dna(const substitution_matrix& m) {
    constexpr std::string_view bases = "ACGT";
    for (char x : bases)
        if (!m.known(x)) return nullptr;
    const int match = m.score(m.code('A'), m.code('A'));
    const int mismatch = m.score(m.code('A'), m.code('C'));
    for (char x : bases)
        for (char y : bases)
            if (m.score(m.code(x), m.code(y)) != (x == y ? match : mismatch)) return nullptr;
    for (const auto& t : dna_tables())
        if (t.reward == match && t.penalty == mismatch) return &t;
    return nullptr;
}

const dna_row* find_dna_row(const dna_table& t, const gap_costs& g) {
    for (const auto& r : t.rows)
        if (r.open == g.open && r.extend == g.extend) return &r;
    return nullptr;
}

std::string dna_pairs_of(const dna_table& t) {
    std::string s = "match ";
    s += std::to_string(t.reward);
    s += " mismatch ";
    s += std::to_string(t.penalty);
    s += ':';
    for (const auto& r : t.rows) {
        s += ' ';
        s += std::to_string(r.open);
        s += '/';
        s += std::to_string(r.extend);
    }
    return s;
}

std::string printf_string(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}

}  // namespace

std::vector<gumbel_table_entry> gumbel_table() {
    std::vector<gumbel_table_entry> out;
    for (const auto& t : tables())
        for (const auto& r : t.rows) out.push_back({t.name, r.open, r.extend, make_params(t, r)});
    return out;
}

bool evalue_calculator::supported(const scoring& sc) {
    if (sc.type == seq_type::dna) {
        const dna_table* t = recognise_dna(sc.matrix);
        return t != nullptr && find_dna_row(*t, sc.gaps) != nullptr;
    }
    const matrix_table* t = recognise(sc.matrix);
    return t != nullptr && find_row(*t, sc.gaps) != nullptr;
}

evalue_calculator::evalue_calculator(const scoring& sc, std::uint64_t db_residues, std::uint64_t db_sequences)
    : db_residues_(db_residues), db_sequences_(db_sequences) {
    const std::string gaps = std::to_string(sc.gaps.open) + "/" + std::to_string(sc.gaps.extend);
    if (sc.type == seq_type::dna) {
        const dna_table* t = recognise_dna(sc.matrix);
        if (t == nullptr) {
            std::string all;
            for (const auto& d : dna_tables()) all += (all.empty() ? "" : "; ") + dna_pairs_of(d);
            throw usage_error("no E-value parameters for DNA scoring '" + sc.matrix.name() +
                              "': blastn has them only for uniform match/mismatch scores (" + all +
                              ", as gap open/extend); use --match/--mismatch with one of them or --no-evalue");
        }
        const dna_row* r = find_dna_row(*t, sc.gaps);
        if (r == nullptr)
            throw usage_error("no E-value parameters for match " + std::to_string(t->reward) + " / mismatch " +
                              std::to_string(t->penalty) + " with gap costs " + gaps +
                              " (open/extend); supported pairs are " + dna_pairs_of(*t) +
                              "; choose one or use --no-evalue");
        params_.lambda = r->lambda;
        params_.K = r->K;
        params_.H = r->H;
        params_.alpha = r->alpha;
        params_.beta = r->beta;
        karlin_altschul_ = true;
        even_scores_ = t->even_scores;
        matrix_name_ = "match" + std::to_string(t->reward) + "/mismatch" + std::to_string(t->penalty);
        return;
    }
    const matrix_table* t = recognise(sc.matrix);
    if (t == nullptr) {
        std::string all;
        for (const auto& m : tables()) all += (all.empty() ? "" : "; ") + pairs_of(m);
        throw usage_error("no E-value parameters for matrix '" + sc.matrix.name() +
                          "': its scores match none of NCBI's matrices with published parameters (" + all +
                          ", as gap open/extend); use one of them or --no-evalue");
    }
    const table_row* r = find_row(*t, sc.gaps);
    if (r == nullptr)
        throw usage_error("no E-value parameters for " + std::string(t->name) + " with gap costs " + gaps +
                          " (open/extend); supported pairs are " + pairs_of(*t) + "; choose one or use --no-evalue");
    params_ = make_params(*t, *r);
    ranking_shape_ = {params_.lambda, params_.alpha, params_.b, params_.alpha_v, params_.beta_v, params_.sigma,
                      params_.tau};
    matrix_name_ = t->name;
}

int evalue_calculator::statistical_score(int raw) const { return even_scores_ ? (raw & ~1) : raw; }

double evalue_calculator::bit_score(int raw) const {
    // blastn rounds odd scores down for its E-values only; its bit scores use the score as it is.
    return (params_.lambda * raw - std::log(params_.K)) / std::numbers::ln2;
}

double evalue_calculator::evalue(int raw, std::uint64_t query_length, std::uint64_t subject_length) const {
    const gumbel_params& p = params_;
    const double S = statistical_score(raw);
    const double m = static_cast<double>(query_length == 0 ? 1 : query_length);
    const double n = static_cast<double>(subject_length == 0 ? 1 : subject_length);

    if (karlin_altschul_) {
        // blastn: E = K·(m − ℓ)·(D − N·ℓ)·e^{−λS}, ℓ the length adjustment; without a database the subject is the
        // whole search space (D = n, N = 1), as in a two-sequence comparison.
        const double D = db_residues_ == 0 ? n : static_cast<double>(db_residues_);
        const double N = db_residues_ == 0 ? 1.0 : static_cast<double>(std::max<std::uint64_t>(db_sequences_, 1));
        const double ell = static_cast<double>(length_adjustment(p.K, p.alpha / p.lambda, p.beta, m, D, N));
        const double db_effective = std::max(1.0, D - N * ell);
        return (m - ell) * db_effective * p.K * std::exp(-p.lambda * S);
    }

    // Length distributions of an optimal alignment scoring S along the query (m) and along the subject (n); the
    // matrices are symmetric, so both use the same a, b, α_v, β_v (core/align/evalue_rank.hpp).
    const double area = spouge_area(ranking_shape_, S, m, n);
    const double pairwise = area * p.K * std::exp(-p.lambda * S);
    const double db_scale = db_residues_ == 0 ? 1.0 : static_cast<double>(db_residues_) / n;
    return pairwise * db_scale;
}

double evalue_calculator::evalue_of_score(double score, std::uint64_t query_length,
                                          std::uint64_t subject_length) const {
    if (karlin_altschul_) return evalue(static_cast<int>(std::floor(score)), query_length, subject_length);
    const gumbel_params& p = params_;
    const double m = static_cast<double>(query_length == 0 ? 1 : query_length);
    const double n = static_cast<double>(subject_length == 0 ? 1 : subject_length);
    const double area = spouge_area(ranking_shape_, score, m, n);
    const double db_scale = db_residues_ == 0 ? 1.0 : static_cast<double>(db_residues_) / n;
    return area * p.K * std::exp(-p.lambda * score) * db_scale;
}

std::int64_t length_adjustment(double K, double alpha_over_lambda, double beta, double m, double D, double N) {
    // ℓ is the expected length of an alignment with E-value about 1 in the search space it leaves,
    //   f(ℓ) = (α/λ)·(ln K + ln((m − ℓ)(D − N·ℓ))) + β,
    // taken as the largest integer ℓ with f(ℓ) >= ℓ. It is sought below ℓ_max, the largest ℓ with
    // K·(m − ℓ)·(D − N·ℓ) >= max(m, D) (the smaller root of a quadratic in ℓ), so that the space left is never
    // smaller than a sequence; when even ℓ = 0 leaves less, ℓ = 0. f(ℓ) − ℓ decreases on [0, ℓ_max]: bisection.
    const double a = N, minus_b = m * N + D, c = m * D - std::max(m, D) / K;
    if (c < 0) return 0;
    const double ell_max = 2 * c / (minus_b + std::sqrt(minus_b * minus_b - 4 * a * c));
    auto at_or_below_fixed_point = [&](double ell) {
        return alpha_over_lambda * (std::log(K) + std::log((m - ell) * (D - N * ell))) + beta >= ell;
    };
    std::int64_t lo = 0, hi = static_cast<std::int64_t>(std::floor(ell_max));
    if (!at_or_below_fixed_point(0)) return 0;
    if (at_or_below_fixed_point(static_cast<double>(hi))) return hi;
    while (hi - lo > 1) {  // invariant: lo is at or below the fixed point, hi above it
        const std::int64_t mid = lo + (hi - lo) / 2;
        (at_or_below_fixed_point(static_cast<double>(mid)) ? lo : hi) = mid;
    }
    return lo;
}

std::string format_evalue(double e) {
    if (std::isnan(e)) return "nan";
    if (e < 1.0e-180) return "0.0";
    if (e < 0.0009) return printf_string("%.2e", e);
    if (e < 0.1) return printf_string("%4.3f", e);
    if (e < 1.0) return printf_string("%3.2f", e);
    if (e < 10.0) return printf_string("%2.1f", e);
    return printf_string("%2.0f", e);
}

std::string format_bit_score(double b) {
    if (std::isnan(b)) return "nan";
    if (b > 99999.0) return printf_string("%5.3e", b);
    if (b > 99.9) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%3ld", static_cast<long>(b));
        return buf;
    }
    return printf_string("%4.1f", b);
}

}  // namespace swgpu
