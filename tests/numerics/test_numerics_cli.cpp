// The numerical commands as their users judge them: counts in sweeps, files NumPy loads, options that do not apply
// refused, output names that match their format, inputs read as NumPy and OpenCV read them, bins as np.histogram makes
// them. The references are NumPy and OpenCV (/usr/bin/python3, the interpreter Debian's python3-numpy belongs to),
// never values copied from the code under test.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_support.hpp"

namespace {

using namespace swgpu::testing;
namespace fs = std::filesystem;

const std::string python = "/usr/bin/python3";

bool have_python(const char* modules) {
    return fs::exists(python) &&
           std::system((python + " -c 'import " + modules + "' >/dev/null 2>&1").c_str()) == 0;
}

// Runs a Python script in `dir` (the script's text written there first); its exit code, stdout and stderr.
program_result run_python(const temp_dir& dir, const std::string& script) {
    {
        std::ofstream(dir / "check.py") << "import sys, numpy as np\n" << script;
    }
    const std::string cmd = "cd '" + dir.path.string() + "' && " + python + " check.py >py.out 2>py.err";
    const int status = std::system(cmd.c_str());
    program_result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(dir / "py.out");
    r.err = slurp(dir / "py.err");
    return r;
}

// swgpu ARGS with stdin from `input`.
program_result run_with_stdin(const std::string& args, const std::string& input) { return run_program(args, "", input); }

std::string q(const std::string& path) { return "'" + path + "'"; }

// The number after `word ` in a line ("sweeps 12" -> 12); -1 when absent.
long long number_after(const std::string& line, const std::string& word) {
    const auto at = line.find(" " + word + " ");
    if (at == std::string::npos) return -1;
    return std::stoll(line.substr(at + word.size() + 2));
}

}  // namespace

TEST_CASE("swgpu sor counts sweeps over the grid: stdout, --max-sweeps, the history and the plot", "[sor][cli]") {
    const temp_dir dir("swgpu-items");
    // mlssor with K = 3: an iteration is 6 sweeps, ssor's 2, lex's 1.
    struct method_case {
        const char* args;
        int per;
    };
    for (const method_case m : {method_case{"--method lex", 1}, method_case{"--method ssor", 2},
                                method_case{"--method mlssor --layers 3", 6}, method_case{"--method mlssor --layers 2", 4}}) {
        INFO(m.args);
        const auto r = run_program("sor --problem rough --size 33 " + std::string(m.args) + " --tol 1e-6 --history " +
                                   q(dir / "h.tsv") + " --backend cpu");
        REQUIRE(r.code == 0);
        const long long sweeps = number_after(r.out, "sweeps"), iterations = number_after(r.out, "iterations");
        CHECK(iterations > 0);
        CHECK(sweeps == iterations * m.per);
        const auto lines = lines_of(slurp(dir / "h.tsv"));
        REQUIRE(lines.size() == static_cast<std::size_t>(iterations) + 1);
        CHECK(lines[0] == "sweep\titeration\tresidual\tseconds");
        const auto first = fields_of(lines[1]), last = fields_of(lines.back());
        CHECK(first[0] == std::to_string(m.per));
        CHECK(first[1] == "1");
        CHECK(last[0] == std::to_string(sweeps));
    }
    // --max-sweeps counts sweeps: ssor stops at the end of the iteration that reaches 5, after 6.
    auto r = run_program("sor --model 33 --method ssor --max-sweeps 5 --backend cpu");
    CHECK(r.code == 6);
    CHECK(number_after(r.out, "sweeps") == 6);
    CHECK(number_after(r.out, "iterations") == 3);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("after 6 sweeps (--max-sweeps 5)") != std::string::npos);
    // --stagnation counts sweeps too: mlssor (6 sweeps an iteration) below its round-off floor stops within 60 sweeps
    // (10 iterations) of its smallest residual.
    r = run_program("sor --model 17 --method mlssor --tol 1e-30 --stagnation 60 --max-sweeps 100000 --backend cpu");
    CHECK(r.code == 6);
    CHECK(r.err.find("stagnated") != std::string::npos);
    CHECK(number_after(r.out, "sweeps") % 6 == 0);
}

TEST_CASE("swgpu sor: the history and levels --stats load with np.genfromtxt(names=True) and np.loadtxt(skiprows=1)", "[sor][levels][cli]") {
    if (!have_python("numpy")) {
        WARN(python + " with numpy is not available: the TSV files not checked with NumPy");
        return;
    }
    const temp_dir dir("swgpu-items");
    REQUIRE(run_program("sor --model 33 --method ssor --history " + q(dir / "h.tsv") + " --backend cpu").code == 0);
    {
        std::ofstream(dir / "a.mtx") << "%%MatrixMarket matrix coordinate real general\n4 4 6\n1 1 2\n2 2 2\n3 1 1\n3 3 2\n"
                                        "4 3 1\n4 4 2\n";
    }
    REQUIRE(run_program("levels --matrix " + q(dir / "a.mtx") + " --stats " + q(dir / "s.tsv") + " --backend cpu -q").code == 0);
    const auto py = run_python(dir, R"(
h = np.genfromtxt("h.tsv", names=True)
assert h.dtype.names == ("sweep", "iteration", "residual", "seconds"), h.dtype.names
assert (h["sweep"] == 2 * h["iteration"]).all()
assert (np.diff(h["seconds"]) >= 0).all() and h["seconds"][0] >= 0
assert h["residual"][-1] <= 1e-8 < h["residual"][0]
t = np.loadtxt("h.tsv", skiprows=1)
assert t.shape == (len(h), 4), t.shape
assert (t[:, 0] == h["sweep"]).all()
s = np.genfromtxt("s.tsv", names=True)
assert s.dtype.names == ("level", "width"), s.dtype.names
# rows 1, 2 on level 1 (no dependences), row 3 reads row 1 (level 2), row 4 reads row 3 (level 3)
assert s["level"].tolist() == [1, 2, 3] and s["width"].tolist() == [2, 1, 1], s
u = np.loadtxt("s.tsv", skiprows=1)
assert u.tolist() == [[1, 2], [2, 1], [3, 1]], u
)");
    INFO(py.err);
    CHECK(py.code == 0);
}

TEST_CASE("swgpu sor --plot: an SVG with the residual's label and the tolerance line, names that are not .svg refused", "[sor][cli]") {
    const temp_dir dir("swgpu-items");
    REQUIRE(run_program("sor --model 17 --tol 1e-7 --plot " + q(dir / "p.svg") + " --backend cpu").code == 0);
    const std::string svg = slurp(dir / "p.svg");
    CHECK(svg.rfind("<svg", 0) == 0);
    CHECK(svg.find("relative residual") != std::string::npos);
    CHECK(svg.find(">sweeps<") != std::string::npos);
    CHECK(svg.find("class=\"tol\"") != std::string::npos);
    CHECK(svg.find("--tol 1e-07") != std::string::npos);
    // Output names that name another format: exit 2, one line, nothing written.
    for (const std::string& args : {"--plot " + q(dir / "p.png"), "-o " + q(dir / "u.txt"), "--history " + q(dir / "h.npy")}) {
        INFO(args);
        const auto r = run_program("sor --model 9 --backend cpu " + args);
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
    }
    CHECK(!fs::exists(dir / "p.png"));
    CHECK(!fs::exists(dir / "u.txt"));
    CHECK(!fs::exists(dir / "h.npy"));
    const auto r = run_program("sweep3d --n 4 -o " + q(dir / "g.png"));
    CHECK(r.code == 2);
    CHECK(one_error_line(r.err));
    CHECK(run_program("levels --matrix x.mtx --stats " + q(dir / "s.npy")).code == 2);
    CHECK(dir.count() == 1);  // p.svg only
}

TEST_CASE("options that do not apply are refused with exit code 2 and one line", "[sor][sat][sweep3d][cli]") {
    const temp_dir dir("swgpu-items");
    {
        std::ofstream(dir / "img.pgm", std::ios::binary) << "P5\n2 2\n255\n" << std::string("\x01\x02\x03\x04", 4);
    }
    for (const std::string& args :
         {std::string("sor --model 9 --layers 2 --backend cpu"), std::string("sor --model 9 --method ssor --layers 2"),
          "sat " + q(dir / "img.pgm") + " --box-filter 1 --type float32 -o " + q(dir / "b.pgm"),
          std::string("sweep3d --n 4 --kernel dd --loops 3"), std::string("sweep3d --n 4 --kernel dd --c 2"),
          std::string("sweep3d --n 4 --angles 4"), std::string("sweep3d --n 4 --kernel fmod --sigma 2")}) {
        INFO(args);
        const auto r = run_program(args);
        CHECK(r.code == 2);
        CHECK(one_error_line(r.err));
    }
    CHECK(!fs::exists(dir / "b.pgm"));
    // The options where they apply still run.
    CHECK(run_program("sor --model 9 --method mlssor --layers 2 --backend cpu").code == 0);
    CHECK(run_program("sweep3d --n 4 --kernel dd --angles 4 --backend cpu").code == 0);
    CHECK(run_program("sweep3d --n 4 --loops 3 --c 2 --backend cpu").code == 0);
}

TEST_CASE("swgpu levels warns, with their count, about entries outside the triangle solved", "[levels][cli]") {
    const temp_dir dir("swgpu-items");
    // An upper factor: the lower triangle (the default) is its diagonal only.
    {
        std::ofstream(dir / "u.mtx") << "%%MatrixMarket matrix coordinate real general\n3 3 5\n1 1 2\n1 2 1\n2 2 2\n"
                                        "2 3 1\n3 3 2\n";
    }
    auto r = run_program("levels --matrix " + q(dir / "u.mtx") + " -o " + q(dir / "x.npy") + " --backend cpu");
    CHECK(r.code == 0);
    CHECK(r.err.find("swgpu: warning: " + (dir / "u.mtx") + ":4: entry (1, 2) is outside the lower triangle; 2 entries") !=
          std::string::npos);
    CHECK(r.err.find("--upper") != std::string::npos);
    r = run_program("levels --matrix " + q(dir / "u.mtx") + " --upper -o " + q(dir / "x.npy") + " --backend cpu");
    CHECK(r.code == 0);
    CHECK(r.err.find("warning") == std::string::npos);
    r = run_program("levels --matrix " + q(dir / "u.mtx") + " -q -o " + q(dir / "x.npy") + " --backend cpu");
    CHECK(r.err.empty());
    // A symmetric file means both triangles: nothing is left out.
    {
        std::ofstream(dir / "s.mtx") << "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2\n2 1 1\n2 2 2\n";
    }
    r = run_program("levels --matrix " + q(dir / "s.mtx") + " --upper -o " + q(dir / "y.npy") + " --backend cpu");
    CHECK(r.code == 0);
    CHECK(r.err.find("warning") == std::string::npos);
}

TEST_CASE("sat and ihist: a (W,) array gives a (W,) table and a (W, B) histogram, and - reads stdin", "[sat][cli]") {
    if (!have_python("numpy")) {
        WARN(python + " with numpy is not available: not checked");
        return;
    }
    const temp_dir dir("swgpu-items");
    REQUIRE(run_python(dir, R"(
rng = np.random.default_rng(5)
np.save("v.npy", rng.integers(0, 1000, 37).astype(np.int32))
np.save("img.npy", rng.random((9, 11)))
)").code == 0);
    CHECK(run_program("sat " + q(dir / "v.npy") + " -o " + q(dir / "t.npy") + " --backend cpu").code == 0);
    CHECK(run_program("sat " + q(dir / "v.npy") + " --box-filter 2 -o " + q(dir / "b.npy") + " --backend cpu").code == 0);
    CHECK(run_program("ihist " + q(dir / "v.npy") + " --bins 4 -o " + q(dir / "h.npy") + " --backend cpu").code == 0);
    CHECK(run_with_stdin("sat - -o " + q(dir / "s.npy") + " --backend cpu", dir / "img.npy").code == 0);
    const auto r = run_with_stdin("sat - -o " + q(dir / "e.npy") + " --backend cpu", "/dev/null");
    CHECK(r.code == 1);
    CHECK(r.err.find("stdin") != std::string::npos);
    CHECK(!fs::exists(dir / "e.npy"));
    const auto py = run_python(dir, R"(
v = np.load("v.npy")
t = np.load("t.npy")
assert t.shape == v.shape and t.dtype == np.int64, (t.shape, t.dtype)
assert (t == np.cumsum(v.astype(np.int64))).all()
b = np.load("b.npy")
assert b.shape == v.shape, b.shape
h = np.load("h.npy")
assert h.shape == (37, 4), h.shape
assert (h[-1] == np.histogram(v, 4)[0]).all(), (h[-1], np.histogram(v, 4)[0])
s = np.load("s.npy")
img = np.load("img.npy")
assert s.shape == img.shape and np.allclose(s, img.cumsum(0).cumsum(1), rtol=1e-13, atol=0)
)");
    INFO(py.err);
    CHECK(py.code == 0);
}

TEST_CASE("ihist without --edges bins as np.histogram does, value by value", "[ihist][cli]") {
    if (!have_python("numpy")) {
        WARN(python + " with numpy is not available: not checked");
        return;
    }
    const temp_dir dir("swgpu-items");
    // Values on and next to the edges (linspace steps, their neighbours one ulp away), float64 and float32, a
    // constant array (min = max: NumPy widens the range by 0.5), and integers beyond 16 bits.
    REQUIRE(run_python(dir, R"(
rng = np.random.default_rng(11)
e = np.linspace(-1.3, 2.9, 11)
a = np.concatenate([e, np.nextafter(e, -np.inf), np.nextafter(e, np.inf), rng.normal(size=200)]).clip(-1.3, 2.9)
np.save("d.npy", a)
np.save("f.npy", np.concatenate([e.astype(np.float32), rng.normal(size=300).astype(np.float32) * 7]))
np.save("c.npy", np.full(20, 4.25))
np.save("i.npy", rng.integers(-70000, 90000, 300).astype(np.int32))
# float32 data: NumPy 1.24 makes the edges in float64 (linspace of the float32 min and max) and rounds them to float32;
# values on those edges and one float32 ulp either side of them, for 13 and 6 bins
g0 = (rng.normal(size=60) * 5).astype(np.float32)
m, M = g0.min(), g0.max()
parts = [g0]
for B in (13, 6):
    E = np.linspace(m, M, B + 1).astype(np.float32)
    parts += [E, np.nextafter(E, np.float32(-np.inf)), np.nextafter(E, np.float32(np.inf))]
np.save("g.npy", np.concatenate(parts).clip(m, M).astype(np.float32))
np.save("k.npy", np.full(9, np.float32(1.1)))
)").code == 0);
    struct input_case {
        const char* name;
        int bins;
    };
    for (const input_case c : {input_case{"d", 10}, input_case{"d", 7}, input_case{"f", 13}, input_case{"f", 10},
                               input_case{"c", 3}, input_case{"i", 9}, input_case{"g", 13}, input_case{"g", 6},
                               input_case{"k", 3}}) {
        INFO(c.name << " " << c.bins);
        const std::string out = dir / (std::string(c.name) + std::to_string(c.bins) + ".h.npy");
        REQUIRE(run_program("ihist " + q(dir / (std::string(c.name) + ".npy")) + " --bins " + std::to_string(c.bins) +
                            " -o " + q(out) + " --backend cpu").code == 0);
        // Each value's bin from NumPy: its one-hot weight in np.histogram over the whole array (the same edges and the
        // same fast path for equal bins); the tool's from the differences of its integral histogram along the row.
        const auto py = run_python(dir, "a = np.load('" + std::string(c.name) + ".npy')\nh = np.load('" + out +
                                            "').astype(np.int64)\nB = " + std::to_string(c.bins) + R"(
assert h.shape == (len(a), B), h.shape
ours = np.argmax(np.diff(np.vstack([np.zeros((1, B), np.int64), h]), axis=0), axis=1)
for k in range(len(a)):
    w = np.zeros(len(a)); w[k] = 1
    theirs = np.argmax(np.histogram(a, B, weights=w)[0])
    assert ours[k] == theirs, (k, a[k], ours[k], theirs)
assert (h[-1] == np.histogram(a, B)[0]).all()
)");
        INFO(py.err);
        CHECK(py.code == 0);
    }
}

TEST_CASE("images: palette PNGs read as grey or colour as they show, float64 TIFF in and out, multi-page TIFF refused", "[sat][cli]") {
    if (!have_python("numpy, cv2, zlib")) {
        WARN(python + " with numpy and cv2 is not available: not checked");
        return;
    }
    const temp_dir dir("swgpu-items");
    // Palette PNGs written by hand (OpenCV writes none): a grey palette, a colour one, each with and without tRNS;
    // the expected pixels are the palette looked up here. A float64 TIFF and a three-page TIFF from OpenCV.
    REQUIRE(run_python(dir, R"(
import struct, zlib, cv2
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
def palette_png(name, index, palette, trns=None):
    h, w = index.shape
    raw = b"".join(b"\0" + bytes(row) for row in index.astype(np.uint8))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 3, 0, 0, 0))
    data += chunk(b"PLTE", bytes(palette.astype(np.uint8).ravel()))
    if trns is not None:
        data += chunk(b"tRNS", bytes(trns.astype(np.uint8)))
    data += chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    open(name, "wb").write(data)
rng = np.random.default_rng(3)
index = rng.integers(0, 6, (5, 7))
grey = np.array([0, 40, 90, 128, 200, 255])
colour = rng.integers(0, 256, (6, 3))
trns = np.array([255, 0, 128, 7])  # entries 4 and 5 opaque
alpha = np.concatenate([trns, [255, 255]])[index]
palette_png("grey.png", index, np.stack([grey] * 3, axis=1))
np.save("grey.expect.npy", grey[index].astype(np.uint64).cumsum(0).cumsum(1))
palette_png("grey_a.png", index, np.stack([grey] * 3, axis=1), trns)
np.save("grey_a.expect.npy", np.dstack([grey[index], alpha]).astype(np.uint64).cumsum(0).cumsum(1))
palette_png("colour.png", index, colour)
np.save("colour.expect.npy", colour[index].astype(np.uint64).cumsum(0).cumsum(1))
palette_png("colour_a.png", index, colour, trns)
np.save("colour_a.expect.npy", np.dstack([colour[index], alpha]).astype(np.uint64).cumsum(0).cumsum(1))
f = rng.normal(size=(6, 9)) * 1e10
assert cv2.imwrite("f64.tif", f)
np.save("f64.npy", f)
assert cv2.imwritemulti("pages.tif", [np.full((4, 4), k, np.uint8) for k in range(3)])
)").code == 0);
    for (const char* name : {"grey", "grey_a", "colour", "colour_a"}) {
        INFO(name);
        REQUIRE(run_program("sat " + q(dir / (std::string(name) + ".png")) + " -o " + q(dir / (std::string(name) + ".t.npy")) +
                            " --backend cpu").code == 0);
    }
    REQUIRE(run_program("sat " + q(dir / "f64.tif") + " -o " + q(dir / "f64.t.npy") + " --backend cpu").code == 0);
    REQUIRE(run_program("sat " + q(dir / "f64.npy") + " --box-filter 1 -o " + q(dir / "box.tif") + " --backend cpu").code == 0);
    REQUIRE(run_program("sat " + q(dir / "f64.npy") + " --box-filter 1 -o " + q(dir / "box.npy") + " --backend cpu").code == 0);
    const auto r = run_program("sat " + q(dir / "pages.tif") + " -o " + q(dir / "pages.t.npy") + " --backend cpu");
    CHECK(r.code == 1);
    CHECK(one_error_line(r.err));
    CHECK(r.err.find("3 pages") != std::string::npos);
    CHECK(!fs::exists(dir / "pages.t.npy"));
    const auto py = run_python(dir, R"(
import cv2
for name in ["grey", "grey_a", "colour", "colour_a"]:
    t, e = np.load(name + ".t.npy"), np.load(name + ".expect.npy")
    assert t.shape == e.shape and (t == e).all(), (name, t.shape, e.shape)
f = cv2.imread("f64.tif", cv2.IMREAD_UNCHANGED)
assert f.dtype == np.float64
t = np.load("f64.t.npy")
assert t.dtype == np.float64 and np.allclose(t, f.cumsum(0).cumsum(1), rtol=1e-12, atol=1e-2)
b = cv2.imread("box.tif", cv2.IMREAD_UNCHANGED)
assert b.dtype == np.float64 and b.shape == f.shape, (b.dtype, b.shape)
assert (b == np.load("box.npy")).all()
assert np.allclose(b, cv2.boxFilter(f, -1, (3, 3), borderType=cv2.BORDER_REFLECT_101), rtol=1e-12, atol=1e-3)
)");
    INFO(py.err);
    CHECK(py.code == 0);
}

TEST_CASE("CPU choices from measured data: sor's threads on small grids, levels' sequential substitution on narrow levels", "[sor][levels][cli]") {
    const temp_dir dir("swgpu-items");
    // sor -t 0 below sor.cpu_one_thread_below runs one thread; -t 2 is obeyed; the key moves the boundary.
    auto r = run_program("sor --problem rough --size 33 --tol 1e-6 --backend cpu -o " + q(dir / "u1.npy"));
    REQUIRE(r.code == 0);
    CHECK(number_after(r.out, "threads") == 1);
    r = run_program("sor --problem rough --size 33 --tol 1e-6 --backend cpu -t 2 -o " + q(dir / "u2.npy"));
    REQUIRE(r.code == 0);
    CHECK(number_after(r.out + " ", "threads") == 2);
    CHECK(slurp(dir / "u1.npy") == slurp(dir / "u2.npy"));  // the same bits either way
    r = run_program("sor --problem rough --size 33 --tol 1e-6 --backend cpu -t 0", "SWGPU_TUNE=sor.cpu_one_thread_below=3");
    CHECK(number_after(r.out + " ", "threads") >= 1);
    // levels: a bidiagonal matrix has one row per level: the sequential substitution runs, with the same bits as the
    // levels (forced with a threshold of 0) and as --sequential.
    {
        std::ofstream m(dir / "bi.mtx");
        m << "%%MatrixMarket matrix coordinate real general\n300 300 599\n";
        for (int i = 1; i <= 300; ++i) m << i << " " << i << " " << 2 + i % 3 << "\n";
        for (int i = 2; i <= 300; ++i) m << i << " " << i - 1 << " -1\n";
    }
    r = run_program("levels --matrix " + q(dir / "bi.mtx") + " -o " + q(dir / "a.npy") + " --backend cpu -t 2");
    REQUIRE(r.code == 0);
    CHECK(r.err.find("sequential substitution: 1.0 rows per level") != std::string::npos);
    r = run_program("levels --matrix " + q(dir / "bi.mtx") + " -o " + q(dir / "b.npy") + " --backend cpu -t 2",
                    "SWGPU_TUNE=levels.cpu_sequential_width=0");
    REQUIRE(r.code == 0);
    CHECK(r.err.find("by levels on 2 threads") != std::string::npos);
    REQUIRE(run_program("levels --matrix " + q(dir / "bi.mtx") + " -o " + q(dir / "c.npy") + " --sequential -q").code == 0);
    CHECK(slurp(dir / "a.npy") == slurp(dir / "b.npy"));
    CHECK(slurp(dir / "a.npy") == slurp(dir / "c.npy"));
}

TEST_CASE("sat --query: rectangle sums of float images are the exact sums rounded once, as math.fsum gives them",
          "[sat][cli]") {
    if (!have_python("numpy")) {
        WARN(python + " with numpy is not available: not checked");
        return;
    }
    const temp_dir dir("swgpu-exact-rects");
    // A float64 image in [1000, 1001) (a one-pixel sum was a difference of four table entries near 1.6e10, off by
    // 1.7e-5), one of mixed signs and magnitudes, and a float32 one; one-pixel, row, column and whole rectangles.
    REQUIRE(run_python(dir, R"(
rng = np.random.default_rng(5)
np.save("a.npy", 1000 + rng.random((700, 900)))
np.save("b.npy", rng.normal(size=(300, 400)) * 10.0 ** rng.integers(-6, 7, (300, 400)))
np.save("c.npy", (rng.random((200, 300)) * 3 - 1).astype(np.float32))
with open("r.tsv", "w") as f:
    for t, l, b, r in [(0, 0, 0, 0), (150, 280, 150, 280), (199, 0, 199, 299), (5, 7, 199, 7), (0, 0, 199, 299),
                       (13, 17, 123, 211), (100, 100, 100, 101)]:
        f.write(f"{t}\t{l}\t{b}\t{r}\n")
)").code == 0);
    for (const std::string img : {"a", "b", "c"}) {
        INFO(img);
        const auto r = run_program("sat --backend cpu -q " + q(dir / (img + ".npy")) + " --query " + q(dir / "r.tsv") +
                                   " --query-out " + q(dir / (img + ".sums")));
        REQUIRE(r.code == 0);
        const auto py = run_python(dir, "import math\na = np.load('" + img + ".npy')\n" + R"(
rects = [tuple(int(x) for x in l.split()) for l in open("r.tsv")]
rows = [l.split("\t") for l in open(")" + img + R"(.sums").read().splitlines()]
assert len(rows) == len(rects), (len(rows), len(rects))
for (t, l, b, r), row in zip(rects, rows):
    want = math.fsum(float(x) for x in a[t:b + 1, l:r + 1].ravel())
    got = float(row[5])
    assert got == want, (t, l, b, r, got, want)
)");
        INFO(py.err);
        CHECK(py.code == 0);
    }
}
