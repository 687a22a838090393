// The order of hits by E-value, computed the same way by the CPU's and the GPU's selection of a query's best hits.
//
// A protein E-value (core/align/statistics.hpp) is E = K·e^{−λS}·area(S, m, n)·D/n: for one query (m) and one
// database (D) it depends on the subject's length n as well as on the score S, so the hits with the smallest
// E-values are not the ones with the highest scores (a short subject's hit can beat a long subject's hit of a higher
// score). Since K and D are the same for every hit of a search, hits are ordered by
//   key(S, m, n) = λS − ln(area(S, m, n)/n)        (larger key, smaller E-value: E = K·D·e^{−key})
// which needs neither D (known only once the whole database has been read) nor K. Keys from rank_cap on are taken as
// equal (E below K·D·e^{−700}, printed "0.0" and far below double's range once scaled): those hits keep the score
// order, as do hits with equal keys. evalue_rank() gives rank_cap − min(key, rank_cap): 0 for those hits, smaller
// for a smaller E-value. DNA E-values (Karlin-Altschul with BLAST's length adjustment) do not depend on n in a
// database search, so DNA hits are ordered by score alone.
#pragma once

#include <cmath>

#include "core/host_device.hpp"

namespace swgpu {

// The parameters of Spouge's area (statistics.hpp's gumbel_params, those the order needs).
struct spouge_shape {
    double lambda = 0, alpha = 0, b = 0, alpha_v = 0, beta_v = 0, sigma = 0, tau = 0;
};

inline constexpr double rank_cap = 700;

// area(S, m, n): the expected product of the lengths left to an alignment of score S in sequences of m and n residues
// (statistics.hpp says the formula).
SWGPU_HD double spouge_area(const spouge_shape& p, double S, double m, double n) {
    // Written as statistics.cpp wrote it (z/√2, φ(z) = e^{−z²/2}/√(2π)), so host E-values keep their bits.
    const double sqrt2 = 1.4142135623730951, sqrt_2pi = 2.5066282746310002;
    const double mean_length = p.alpha * S + p.b;
    const double v0 = 2.0 * p.alpha_v / p.lambda, v1 = p.alpha_v * S + p.beta_v;
    const double sd = sqrt(v0 > v1 ? v0 : v1);
    const double mu_m = m - mean_length, z_m = mu_m / sd, P_m = 0.5 * erfc(-z_m / sqrt2);
    const double mu_n = n - mean_length, z_n = mu_n / sd, P_n = 0.5 * erfc(-z_n / sqrt2);
    const double p_m = mu_m * P_m + sd * (exp(-0.5 * z_m * z_m) / sqrt_2pi);
    const double p_n = mu_n * P_n + sd * (exp(-0.5 * z_n * z_n) / sqrt_2pi);
    const double c0 = 2.0 * p.sigma / p.lambda, c1 = p.sigma * S + p.tau;
    return p_m * p_n + (c0 > c1 ? c0 : c1) * P_m * P_n;
}

// rank_cap − min(λS − ln(area/n), rank_cap): smaller for a smaller E-value, 0 for E-values too small to tell apart.
SWGPU_HD double evalue_rank(const spouge_shape& p, int score, double m, double n) {
    const double S = score;
    const double area = spouge_area(p, S, m, n);
    if (!(area > 0)) return 0;  // underflow: an E-value of 0
    const double key = p.lambda * S - log(area / n);
    return key >= rank_cap ? 0.0 : rank_cap - key;
}

}  // namespace swgpu
