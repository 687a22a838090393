#include "core/align/composition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "core/align/masking.hpp"
#include "core/error.hpp"

namespace swgpu {

namespace {

constexpr std::string_view standard_letters = "ARNDCQEGHILKMFPSTWYV";
// NCBIstdaa without its gap letter: the rows and columns of the frequency-ratio table below.
constexpr std::string_view stdaa_letters = "ABCDEFGHIKLMNPQRSTVWXYZU*OJ";
constexpr int stdaa_B = 1, stdaa_X = 20, stdaa_Z = 22, stdaa_U = 23, stdaa_stop = 24;
constexpr int stdaa_size = 27;

// BLOSUM62's frequency ratios f_ij = p_ij / (p_i p_j), rows and columns in the order of stdaa_letters, as NCBI
// publishes them (BLOSUM62_FREQRATIOS); the scores of BLOSUM62 are round(2·log2 f_ij).
constexpr double blosum62_ratios[stdaa_size][stdaa_size] = {
    {3.90294070e+00, 5.64459671e-01, 8.67987664e-01, 5.44605275e-01, 7.41264113e-01, 4.64893827e-01, 1.05686961e+00, 5.69364849e-01, 6.32481035e-01, 7.75390239e-01, 6.01945975e-01, 7.23150342e-01, 5.88307640e-01, 7.54121369e-01, 7.56803943e-01, 6.12698600e-01, 1.47210399e+00, 9.84401956e-01, 9.36458396e-01, 4.16548781e-01, 7.50000000e-01, 5.42611869e-01, 7.47274948e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 6.14377313e-01},
    {5.64459671e-01, 4.43758048e+00, 3.45226274e-01, 4.74290926e+00, 1.33503378e+00, 3.24101420e-01, 7.38524318e-01, 9.25449581e-01, 3.33981361e-01, 8.54849426e-01, 2.97257620e-01, 4.04640322e-01, 4.07083696e+00, 5.53838329e-01, 9.44103648e-01, 7.02873767e-01, 1.05798620e+00, 8.26250098e-01, 3.51280513e-01, 2.52855433e-01, 7.50000000e-01, 4.09444638e-01, 1.18382127e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.12208474e-01},
    {8.67987664e-01, 3.45226274e-01, 1.95765857e+01, 3.01454345e-01, 2.85934574e-01, 4.38990118e-01, 4.20387870e-01, 3.55049505e-01, 6.53458801e-01, 3.49128465e-01, 6.42275633e-01, 6.11354340e-01, 3.97802620e-01, 3.79562691e-01, 3.65781531e-01, 3.08939296e-01, 7.38415701e-01, 7.40551692e-01, 7.55844055e-01, 4.49983903e-01, 7.50000000e-01, 4.34203398e-01, 3.16819526e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 6.46828489e-01},
    {5.44605275e-01, 4.74290926e+00, 3.01454345e-01, 7.39792738e+00, 1.68781075e+00, 2.98969081e-01, 6.34301019e-01, 6.78558839e-01, 3.39015407e-01, 7.84090406e-01, 2.86613046e-01, 3.46454634e-01, 1.55385281e+00, 5.98716826e-01, 8.97081129e-01, 5.73200024e-01, 9.13504624e-01, 6.94789868e-01, 3.36500142e-01, 2.32102315e-01, 7.50000000e-01, 3.45683565e-01, 1.38195506e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.07946931e-01},
    {7.41264113e-01, 1.33503378e+00, 2.85934574e-01, 1.68781075e+00, 5.46952608e+00, 3.30743991e-01, 4.81267655e-01, 9.60040718e-01, 3.30522558e-01, 1.30827885e+00, 3.72873704e-01, 5.00342289e-01, 9.11298183e-01, 6.79202587e-01, 1.90173784e+00, 9.60797602e-01, 9.50357185e-01, 7.41425610e-01, 4.28943130e-01, 3.74300212e-01, 7.50000000e-01, 4.96467354e-01, 4.08949895e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.55631838e-01},
    {4.64893827e-01, 3.24101420e-01, 4.38990118e-01, 2.98969081e-01, 3.30743991e-01, 8.12879702e+00, 3.40640908e-01, 6.51990521e-01, 9.45769883e-01, 3.44043119e-01, 1.15459749e+00, 1.00437163e+00, 3.54288952e-01, 2.87444758e-01, 3.33972402e-01, 3.80726330e-01, 4.39973597e-01, 4.81693683e-01, 7.45089738e-01, 1.37437942e+00, 7.50000000e-01, 2.76938063e+00, 3.31992746e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 1.06958025e+00},
    {1.05686961e+00, 7.38524318e-01, 4.20387870e-01, 6.34301019e-01, 4.81267655e-01, 3.40640908e-01, 6.87630691e+00, 4.92966576e-01, 2.75009722e-01, 5.88871736e-01, 2.84504012e-01, 3.95486600e-01, 8.63711406e-01, 4.77385507e-01, 5.38649627e-01, 4.49983999e-01, 9.03596525e-01, 5.79271582e-01, 3.36954912e-01, 4.21690355e-01, 7.50000000e-01, 3.48714366e-01, 5.03463109e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 2.80638726e-01},
    {5.69364849e-01, 9.25449581e-01, 3.55049505e-01, 6.78558839e-01, 9.60040718e-01, 6.51990521e-01, 4.92966576e-01, 1.35059997e+01, 3.26288125e-01, 7.78887490e-01, 3.80675486e-01, 5.84132623e-01, 1.22200067e+00, 4.72879831e-01, 1.16798104e+00, 9.17048021e-01, 7.36731740e-01, 5.57503254e-01, 3.39447442e-01, 4.44088955e-01, 7.50000000e-01, 1.79790413e+00, 1.04047242e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.58533474e-01},
    {6.32481035e-01, 3.33981361e-01, 6.53458801e-01, 3.39015407e-01, 3.30522558e-01, 9.45769883e-01, 2.75009722e-01, 3.26288125e-01, 3.99792994e+00, 3.96372934e-01, 1.69443475e+00, 1.47774450e+00, 3.27934752e-01, 3.84662860e-01, 3.82937802e-01, 3.54751311e-01, 4.43163582e-01, 7.79816110e-01, 2.41751209e+00, 4.08874390e-01, 7.50000000e-01, 6.30388931e-01, 3.50796872e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 2.63222650e+00},
    {7.75390239e-01, 8.54849426e-01, 3.49128465e-01, 7.84090406e-01, 1.30827885e+00, 3.44043119e-01, 5.88871736e-01, 7.78887490e-01, 3.96372934e-01, 4.76433717e+00, 4.28270363e-01, 6.25302816e-01, 9.39841129e-01, 7.03774479e-01, 1.55432308e+00, 2.07680867e+00, 9.31919141e-01, 7.92905803e-01, 4.56542720e-01, 3.58930071e-01, 7.50000000e-01, 5.32179333e-01, 1.40344922e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 4.15284382e-01},
    {6.01945975e-01, 2.97257620e-01, 6.42275633e-01, 2.86613046e-01, 3.72873704e-01, 1.15459749e+00, 2.84504012e-01, 3.80675486e-01, 1.69443475e+00, 4.28270363e-01, 3.79662137e+00, 1.99429557e+00, 3.10043276e-01, 3.71121724e-01, 4.77325586e-01, 4.73919278e-01, 4.28893743e-01, 6.60328975e-01, 1.31423573e+00, 5.68037074e-01, 7.50000000e-01, 6.92059423e-01, 4.13275887e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 2.94078574e+00},
    {7.23150342e-01, 4.04640322e-01, 6.11354340e-01, 3.46454634e-01, 5.00342289e-01, 1.00437163e+00, 3.95486600e-01, 5.84132623e-01, 1.47774450e+00, 6.25302816e-01, 1.99429557e+00, 6.48145121e+00, 4.74529655e-01, 4.23898024e-01, 8.64250293e-01, 6.22623369e-01, 5.98558924e-01, 7.93801616e-01, 1.26893679e+00, 6.10296214e-01, 7.50000000e-01, 7.08364628e-01, 6.41102583e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 1.78399892e+00},
    {5.88307640e-01, 4.07083696e+00, 3.97802620e-01, 1.55385281e+00, 9.11298183e-01, 3.54288952e-01, 8.63711406e-01, 1.22200067e+00, 3.27934752e-01, 9.39841129e-01, 3.10043276e-01, 4.74529655e-01, 7.09409488e+00, 4.99932836e-01, 1.00058442e+00, 8.58630478e-01, 1.23152924e+00, 9.84152635e-01, 3.69033853e-01, 2.77782896e-01, 7.50000000e-01, 4.86030806e-01, 9.45834265e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.17327197e-01},
    {7.54121369e-01, 5.53838329e-01, 3.79562691e-01, 5.98716826e-01, 6.79202587e-01, 2.87444758e-01, 4.77385507e-01, 4.72879831e-01, 3.84662860e-01, 7.03774479e-01, 3.71121724e-01, 4.23898024e-01, 4.99932836e-01, 1.28375437e+01, 6.41280589e-01, 4.81534905e-01, 7.55503259e-01, 6.88897122e-01, 4.43082984e-01, 2.81833164e-01, 7.50000000e-01, 3.63521119e-01, 6.64534287e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.76634549e-01},
    {7.56803943e-01, 9.44103648e-01, 3.65781531e-01, 8.97081129e-01, 1.90173784e+00, 3.33972402e-01, 5.38649627e-01, 1.16798104e+00, 3.82937802e-01, 1.55432308e+00, 4.77325586e-01, 8.64250293e-01, 1.00058442e+00, 6.41280589e-01, 6.24442175e+00, 1.40579606e+00, 9.65555228e-01, 7.91320741e-01, 4.66777931e-01, 5.09360272e-01, 7.50000000e-01, 6.11094097e-01, 3.58149606e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 4.38898727e-01},
    {6.12698600e-01, 7.02873767e-01, 3.08939296e-01, 5.73200024e-01, 9.60797602e-01, 3.80726330e-01, 4.49983999e-01, 9.17048021e-01, 3.54751311e-01, 2.07680867e+00, 4.73919278e-01, 6.22623369e-01, 8.58630478e-01, 4.81534905e-01, 1.40579606e+00, 6.66557707e+00, 7.67165633e-01, 6.77754679e-01, 4.20072316e-01, 3.95102106e-01, 7.50000000e-01, 5.55965425e-01, 1.13292384e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 4.25403989e-01},
    {1.47210399e+00, 1.05798620e+00, 7.38415701e-01, 9.13504624e-01, 9.50357185e-01, 4.39973597e-01, 9.03596525e-01, 7.36731740e-01, 4.43163582e-01, 9.31919141e-01, 4.28893743e-01, 5.98558924e-01, 1.23152924e+00, 7.55503259e-01, 9.65555228e-01, 7.67165633e-01, 3.84284741e+00, 1.61392097e+00, 5.65223766e-01, 3.85303035e-01, 7.50000000e-01, 5.57520051e-01, 9.56235816e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 4.34703235e-01},
    {9.84401956e-01, 8.26250098e-01, 7.40551692e-01, 6.94789868e-01, 7.41425610e-01, 4.81693683e-01, 5.79271582e-01, 5.57503254e-01, 7.79816110e-01, 7.92905803e-01, 6.60328975e-01, 7.93801616e-01, 9.84152635e-01, 6.88897122e-01, 7.91320741e-01, 6.77754679e-01, 1.61392097e+00, 4.83210516e+00, 9.80943005e-01, 4.30934144e-01, 7.50000000e-01, 5.73156574e-01, 7.60725140e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 7.08974203e-01},
    {9.36458396e-01, 3.51280513e-01, 7.55844055e-01, 3.36500142e-01, 4.28943130e-01, 7.45089738e-01, 3.36954912e-01, 3.39447442e-01, 2.41751209e+00, 4.56542720e-01, 1.31423573e+00, 1.26893679e+00, 3.69033853e-01, 4.43082984e-01, 4.66777931e-01, 4.20072316e-01, 5.65223766e-01, 9.80943005e-01, 3.69215640e+00, 3.74456332e-01, 7.50000000e-01, 6.58038693e-01, 4.43577702e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 1.76339815e+00},
    {4.16548781e-01, 2.52855433e-01, 4.49983903e-01, 2.32102315e-01, 3.74300212e-01, 1.37437942e+00, 4.21690355e-01, 4.44088955e-01, 4.08874390e-01, 3.58930071e-01, 5.68037074e-01, 6.10296214e-01, 2.77782896e-01, 2.81833164e-01, 5.09360272e-01, 3.95102106e-01, 3.85303035e-01, 4.30934144e-01, 3.74456332e-01, 3.81077833e+01, 7.50000000e-01, 2.10980812e+00, 4.26541694e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 5.03239261e-01},
    {7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 7.50000000e-01},
    {5.42611869e-01, 4.09444638e-01, 4.34203398e-01, 3.45683565e-01, 4.96467354e-01, 2.76938063e+00, 3.48714366e-01, 1.79790413e+00, 6.30388931e-01, 5.32179333e-01, 6.92059423e-01, 7.08364628e-01, 4.86030806e-01, 3.63521119e-01, 6.11094097e-01, 5.55965425e-01, 5.57520051e-01, 5.73156574e-01, 6.58038693e-01, 2.10980812e+00, 7.50000000e-01, 9.83220341e+00, 5.40805192e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 6.66952325e-01},
    {7.47274948e-01, 1.18382127e+00, 3.16819526e-01, 1.38195506e+00, 4.08949895e+00, 3.31992746e-01, 5.03463109e-01, 1.04047242e+00, 3.50796872e-01, 1.40344922e+00, 4.13275887e-01, 6.41102583e-01, 9.45834265e-01, 6.64534287e-01, 3.58149606e+00, 1.13292384e+00, 9.56235816e-01, 7.60725140e-01, 4.43577702e-01, 4.26541694e-01, 7.50000000e-01, 5.40805192e-01, 3.89300249e+00, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 3.87839626e-01},
    {7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 7.50000000e-01},
    {2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 2.50000000e-01, 1.33300000e+00, 2.50000000e-01, 2.50000000e-01},
    {7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 7.50000000e-01},
    {6.14377313e-01, 3.12208474e-01, 6.46828489e-01, 3.07946931e-01, 3.55631838e-01, 1.06958025e+00, 2.80638726e-01, 3.58533474e-01, 2.63222650e+00, 4.15284382e-01, 2.94078574e+00, 1.78399892e+00, 3.17327197e-01, 3.76634549e-01, 4.38898727e-01, 4.25403989e-01, 4.34703235e-01, 7.08974203e-01, 1.76339815e+00, 5.03239261e-01, 7.50000000e-01, 6.66952325e-01, 3.87839626e-01, 7.50000000e-01, 2.50000000e-01, 7.50000000e-01, 2.81516607e+00},
};

// Robinson & Robinson (PNAS 88:8880, 1991), per mille, in the order of standard_letters: BLAST's standard
// amino-acid composition.
constexpr double robinson_per_mille[20] = {78.05, 51.29, 44.87, 53.64, 19.25, 42.64, 62.95, 73.77, 21.99, 51.42,
                                           90.19, 57.44, 22.43, 38.56, 52.03, 71.20, 58.41, 13.30, 32.16, 64.41};

int stdaa_index(char letter) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
    const auto at = stdaa_letters.find(c);
    return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

// The stdaa index of each of the 20 standard letters.
int stdaa_of_standard(int i) { return stdaa_index(standard_letters[static_cast<std::size_t>(i)]); }

bool is_standard_stdaa(int a) { return stdaa_letters[static_cast<std::size_t>(a)] != 'B' && a != stdaa_X &&
                                       a != stdaa_Z && a != stdaa_U && a != stdaa_stop &&
                                       stdaa_letters[static_cast<std::size_t>(a)] != 'O' &&
                                       stdaa_letters[static_cast<std::size_t>(a)] != 'J'; }

// BLAST's rounding to the nearest integer, halves away from zero.
long nearest(double x) { return static_cast<long>(x + (x >= 0 ? 0.5 : -0.5)); }

// The expected score of a row (or column) of `v` against letter probabilities, at most −1 (NCBI's X score).
double x_score(const double* v, int stride, const std::array<double, stdaa_size>& probs) {
    double s = 0;
    for (int j = 0; j < stdaa_size; ++j)
        if (is_standard_stdaa(j)) s += v[j * stride] * probs[static_cast<std::size_t>(j)];
    return s <= -1.0 ? s : -1.0;
}

std::array<double, stdaa_size> stdaa_probs(const aa_composition& c) {
    std::array<double, stdaa_size> p{};
    for (int i = 0; i < 20; ++i) p[static_cast<std::size_t>(stdaa_of_standard(i))] = c.p[static_cast<std::size_t>(i)];
    return p;
}

}  // namespace

int standard_aa_index(char letter) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(letter)));
    const auto at = standard_letters.find(c);
    return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

const std::array<double, 20>& standard_aa_frequencies() {
    static const std::array<double, 20> f = [] {
        std::array<double, 20> out{};
        double sum = 0;
        for (double x : robinson_per_mille) sum += x;
        for (int i = 0; i < 20; ++i) out[static_cast<std::size_t>(i)] = robinson_per_mille[i] / sum;
        return out;
    }();
    return f;
}

aa_composition composition_of(std::span<const std::uint8_t> residues, const substitution_matrix& m) {
    std::array<int, substitution_matrix::max_letters> index{};
    for (int c = 0; c < substitution_matrix::max_letters; ++c)
        index[static_cast<std::size_t>(c)] = c < m.size() ? standard_aa_index(m.letter(static_cast<std::uint8_t>(c))) : -1;
    aa_composition out;
    std::array<std::size_t, 20> counts{};
    for (std::uint8_t r : residues) {
        const int i = r < substitution_matrix::max_letters ? index[r] : -1;
        if (i >= 0) ++counts[static_cast<std::size_t>(i)], ++out.residues;
    }
    if (out.residues)
        for (int i = 0; i < 20; ++i)
            out.p[static_cast<std::size_t>(i)] = double(counts[static_cast<std::size_t>(i)]) / double(out.residues);
    return out;
}

double ungapped_lambda(const std::array<double, 400>& scores, const std::array<double, 20>& row,
                       const std::array<double, 20>& col) {
    double max_score = -std::numeric_limits<double>::infinity(), mean = 0;
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j) {
            const double p = row[static_cast<std::size_t>(i)] * col[static_cast<std::size_t>(j)];
            if (p == 0) continue;
            const double s = scores[static_cast<std::size_t>(i * 20 + j)];
            max_score = std::max(max_score, s);
            mean += p * s;
        }
    if (!(max_score > 0) || mean >= 0) return -1;
    // φ(λ) = Σ p_ij e^{λ s_ij} − 1 is convex with φ(0) = 0, φ'(0) < 0 and φ → ∞: one positive root. Bracket it,
    // then bisect to full precision (φ is evaluated as Σ p_ij e^{λ (s_ij − max)} − e^{−λ max}, which cannot overflow).
    const auto phi = [&](double lambda) {
        double sum = 0;
        for (int i = 0; i < 20; ++i)
            for (int j = 0; j < 20; ++j) {
                const double p = row[static_cast<std::size_t>(i)] * col[static_cast<std::size_t>(j)];
                if (p != 0) sum += p * std::exp(lambda * (scores[static_cast<std::size_t>(i * 20 + j)] - max_score));
            }
        return sum - std::exp(-lambda * max_score);
    };
    double lo = 0, hi = 1.0 / max_score;
    while (phi(hi) <= 0) lo = hi, hi *= 2;
    for (int k = 0; k < 200 && hi - lo > 1e-15 * hi; ++k) {
        const double mid = 0.5 * (lo + hi);
        (phi(mid) > 0 ? hi : lo) = mid;
    }
    return 0.5 * (lo + hi);
}

bool composition_adjustment::supported(const substitution_matrix& m) {
    // BLOSUM62's scores on the 20 standard letters.
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j) {
            const std::uint8_t a = m.code(standard_letters[static_cast<std::size_t>(i)]);
            const std::uint8_t b = m.code(standard_letters[static_cast<std::size_t>(j)]);
            if (a == substitution_matrix::no_code || b == substitution_matrix::no_code) return false;
            if (!m.known(standard_letters[static_cast<std::size_t>(i)]) ||
                !m.known(standard_letters[static_cast<std::size_t>(j)]))
                return false;
            const double f = blosum62_ratios[stdaa_of_standard(i)][stdaa_of_standard(j)];
            if (m.score(a, b) != nearest(2 * std::log2(f))) return false;
        }
    return true;
}

composition_adjustment::composition_adjustment(const substitution_matrix& m) : m_(&m) {
    if (!supported(m))
        throw usage_error("--comp-based-stats 1 needs BLOSUM62 (its frequency ratios are built in); the matrix " +
                          m.name() + " is not");
    for (int c = 0; c < substitution_matrix::max_letters; ++c) {
        int a = c < m.size() ? stdaa_index(m.letter(static_cast<std::uint8_t>(c))) : -1;
        stdaa_[static_cast<std::size_t>(c)] = a < 0 ? stdaa_X : a;
    }
    // λ_ideal: BLOSUM62's integer scores on the standard background (BLAST's kbp_ideal).
    std::array<double, 400> integer{};
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j)
            integer[static_cast<std::size_t>(i * 20 + j)] =
                m.score(m.code(standard_letters[static_cast<std::size_t>(i)]),
                        m.code(standard_letters[static_cast<std::size_t>(j)]));
    ideal_lambda_ = ungapped_lambda(integer, standard_aa_frequencies(), standard_aa_frequencies());
    const double lambda32 = ideal_lambda_ / composition_scale;
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j)
            start_[static_cast<std::size_t>(i * 20 + j)] = static_cast<double>(
                nearest(std::log(blosum62_ratios[stdaa_of_standard(i)][stdaa_of_standard(j)]) / lambda32));
}

double composition_adjustment::raw_lambda_ratio(const aa_composition& query, const aa_composition& subject) const {
    const double lambda = ungapped_lambda(start_, query.p, subject.p);
    return lambda < 0 ? -1 : lambda / (ideal_lambda_ / composition_scale);
}

double composition_adjustment::lambda_ratio(const aa_composition& query, const aa_composition& subject) const {
    return std::max(std::min(1.0, raw_lambda_ratio(query, subject)), min_lambda_ratio);
}

wide_matrix composition_adjustment::scaled_matrix(double ratio, const aa_composition& query,
                                                  const aa_composition& subject) const {
    const double lambda32 = ideal_lambda_ / composition_scale;
    const double scaled_lambda = lambda32 / ratio;
    const auto row_probs = stdaa_probs(query), col_probs = stdaa_probs(subject);
    double d[stdaa_size][stdaa_size];
    for (int a = 0; a < stdaa_size; ++a)
        for (int b = 0; b < stdaa_size; ++b) d[a][b] = std::log(blosum62_ratios[a][b]) / scaled_lambda;
    // X: the expected score of its row or column in this context; U as X (NCBI's s_SetXUScores).
    double xx = 0;
    for (int i = 0; i < stdaa_size; ++i) {
        if (!is_standard_stdaa(i)) continue;
        d[i][stdaa_X] = x_score(&d[i][0], 1, col_probs);
        xx += d[i][stdaa_X] * row_probs[static_cast<std::size_t>(i)];
        d[stdaa_X][i] = x_score(&d[0][i], stdaa_size, row_probs);
    }
    d[stdaa_X][stdaa_X] = xx;
    for (int p : {stdaa_B, stdaa_Z}) {
        d[p][stdaa_X] = x_score(&d[p][0], 1, col_probs);
        d[stdaa_X][p] = x_score(&d[0][p], stdaa_size, row_probs);
    }
    for (int j = 0; j < stdaa_size; ++j) d[stdaa_U][j] = d[stdaa_X][j];
    for (int i = 0; i < stdaa_size; ++i) d[i][stdaa_U] = d[i][stdaa_X];
    // The stop letter keeps the unadjusted scaled matrix's scores.
    for (int i = 0; i < stdaa_size; ++i) {
        d[i][stdaa_stop] = static_cast<double>(nearest(std::log(blosum62_ratios[i][stdaa_stop]) / lambda32));
        d[stdaa_stop][i] = static_cast<double>(nearest(std::log(blosum62_ratios[stdaa_stop][i]) / lambda32));
    }
    wide_matrix out;
    const int n = m_->size();
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
            out.scores[static_cast<std::size_t>(a * substitution_matrix::max_letters + b)] = static_cast<std::int32_t>(
                nearest(d[stdaa_[static_cast<std::size_t>(a)]][stdaa_[static_cast<std::size_t>(b)]]));
    return out;
}

namespace {

// NCBI's test for a near-identical hit, on the alignment with the standard matrix: as long in the query as in the
// subject, at least min(query length, 50) long (counted as BLAST does), and at least 98 % identical along its
// diagonal.
bool near_identical(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                    const alignment& a) {
    if (a.score <= 0 || a.query_begin < 0) return false;
    const std::int64_t qlen = a.query_end - a.query_begin + 1, slen = a.subject_end - a.subject_begin + 1;
    if (qlen != slen) return false;
    if (slen + 1 < std::min<std::int64_t>(static_cast<std::int64_t>(query.size()), 50)) return false;
    std::int64_t same = 0;
    for (std::int64_t k = 0; k < qlen; ++k)
        same += query[static_cast<std::size_t>(a.query_begin + k)] == subject[static_cast<std::size_t>(a.subject_begin + k)];
    return double(same) / double(qlen) >= 0.98;
}

}  // namespace

composition_adjustment::result composition_adjustment::adjust(std::span<const std::uint8_t> query,
                                                              const aa_composition& query_composition,
                                                              std::span<const std::uint8_t> subject,
                                                              const alignment& standard, const gap_costs& gaps) const {
    result out;
    std::vector<std::uint8_t> searched(subject.begin(), subject.end());
    if (!near_identical(query, subject, standard)) {
        std::vector<std::uint8_t> letters(subject.size());
        for (std::size_t k = 0; k < subject.size(); ++k)
            letters[k] = static_cast<std::uint8_t>(m_->letter(subject[k]));
        seg_parameters p;
        p.window = 10, p.locut = 1.8, p.hicut = 2.1;
        const std::uint8_t x = m_->code('X');
        for (const masked_interval& iv : seg_intervals(letters, p))
            for (std::size_t k = iv.begin; k <= iv.end && k < searched.size(); ++k) {
                out.subject_masked = out.subject_masked || searched[k] != x;
                searched[k] = x;
            }
    }
    const aa_composition subject_composition = composition_of(searched, *m_);
    if (query_composition.residues == 0 || subject_composition.residues == 0) return out;
    out.lambda_ratio = lambda_ratio(query_composition, subject_composition);
    const wide_matrix scaled = scaled_matrix(out.lambda_ratio, query_composition, subject_composition);
    out.aln = sw_align_wide(query, searched, scaled, gaps.open * composition_scale, gaps.extend * composition_scale);
    out.aligned = out.aln.score > 0;
    return out;
}

alignment sw_align_wide(std::span<const std::uint8_t> query, std::span<const std::uint8_t> subject,
                        const wide_matrix& m, int gap_open, int gap_extend) {
    const std::size_t rows = query.size(), cols = subject.size();
    alignment out;
    if (rows == 0 || cols == 0) return out;
    constexpr std::int64_t minus_inf = std::numeric_limits<std::int64_t>::min() / 4;
    const std::int64_t first = std::int64_t(gap_open) + gap_extend, ext = gap_extend;
    // Per cell: bits 0-1 where H came from (0 zero, 1 diagonal, 2 E, 3 F); bit 2: E opened here (from H above);
    // bit 3: F opened here (from H on the left).
    std::vector<std::uint8_t> trace(rows * cols);
    std::vector<std::int64_t> h_prev(cols + 1, 0), h_cur(cols + 1, 0), e(cols + 1, minus_inf);
    std::int64_t best = 0;
    std::size_t best_i = 0, best_j = 0;
    for (std::size_t i = 1; i <= rows; ++i) {
        const std::uint8_t q = query[i - 1];
        std::int64_t f = minus_inf;
        h_cur[0] = 0;
        for (std::size_t j = 1; j <= cols; ++j) {
            std::uint8_t t = 0;
            const std::int64_t e_open = h_prev[j] - first, e_ext = e[j] - ext;
            if (e_open >= e_ext) e[j] = e_open, t |= 4; else e[j] = e_ext;
            const std::int64_t f_open = h_cur[j - 1] - first, f_ext = f - ext;
            if (f_open >= f_ext) f = f_open, t |= 8; else f = f_ext;
            const std::int64_t diag = h_prev[j - 1] + m.at(q, subject[j - 1]);
            std::int64_t h = 0;
            std::uint8_t from = 0;
            if (diag > h) h = diag, from = 1;
            if (e[j] > h) h = e[j], from = 2;
            if (f > h) h = f, from = 3;
            if (h > 0 && from != 1 && diag == h) from = 1;
            if (h > 0 && from == 3 && e[j] == h) from = 2;
            h_cur[j] = h;
            trace[(i - 1) * cols + (j - 1)] = static_cast<std::uint8_t>(t | from);
            if (h > best) best = h, best_i = i, best_j = j;
        }
        std::swap(h_prev, h_cur);
    }
    if (best <= 0) return out;
    out.score = static_cast<int>(best);
    out.query_end = static_cast<std::int64_t>(best_i) - 1;
    out.subject_end = static_cast<std::int64_t>(best_j) - 1;
    std::vector<char> ops;
    std::size_t i = best_i, j = best_j;
    int state = 0;  // 0 H, 2 E (gap in the subject), 3 F (gap in the query)
    while (i > 0 && j > 0) {
        const std::uint8_t t = trace[(i - 1) * cols + (j - 1)];
        if (state == 0) {
            const int from = t & 3;
            if (from == 0) break;
            if (from == 1) {
                ops.push_back('M');
                --i, --j;
                continue;
            }
            state = from;
        }
        if (state == 2) {
            ops.push_back('I');
            if (t & 4) state = 0;
            --i;
        } else {
            ops.push_back('D');
            if (t & 8) state = 0;
            --j;
        }
    }
    out.query_begin = static_cast<std::int64_t>(i);
    out.subject_begin = static_cast<std::int64_t>(j);
    std::reverse(ops.begin(), ops.end());
    for (char op : ops) {
        if (!out.ops.empty() && out.ops.back().op == op) ++out.ops.back().len;
        else out.ops.push_back({op, 1});
    }
    return out;
}

int unscale_score(int scaled) { return static_cast<int>(nearest(double(scaled) / composition_scale)); }

}  // namespace swgpu
