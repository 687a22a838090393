// The Python module swgpu._swgpu (pybind11): the library face (app/swgpu/swgpu.hpp) for the package swgpu, whose
// __init__.py (app/python/swgpu/__init__.py) turns paths, tuples and NumPy arrays into what these calls take.
//
// Every call that works (search, database searches, align_pair, sat, ihist, triangular_solve, sor, sweep3d) runs
// without the GIL and stops on Ctrl-C (interruptible below); errors are swgpu.Error with the exit code the command line would exit with (std::bad_alloc: 4,
// out of memory).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/swgpu/swgpu.hpp"

namespace py = pybind11;

namespace {

PyObject* error_type = nullptr;  // swgpu.Error, made once at import

[[noreturn]] void raise(swgpu::exit_code code, const std::string& what) { throw swgpu::error(code, what); }

swgpu::strands parse_strand(const std::string& s) {
    if (s == "both") return swgpu::strands::both;
    if (s == "plus") return swgpu::strands::plus;
    if (s == "minus") return swgpu::strands::minus;
    raise(swgpu::exit_code::bad_command_line, "strand must be \"both\", \"plus\" or \"minus\", not \"" + s + "\"");
}

swgpu::sequence_type parse_seqtype(const std::string& s) {
    if (s == "auto") return swgpu::sequence_type::automatic;
    if (s == "protein") return swgpu::sequence_type::protein;
    if (s == "dna") return swgpu::sequence_type::dna;
    raise(swgpu::exit_code::bad_command_line, "seqtype must be \"auto\", \"protein\" or \"dna\", not \"" + s + "\"");
}

swgpu::backend parse_backend(const std::string& s) {
    if (s == "auto") return swgpu::backend::automatic;
    if (s == "cpu") return swgpu::backend::cpu;
    if (s == "gpu") return swgpu::backend::gpu;
    raise(swgpu::exit_code::bad_command_line, "backend must be \"auto\", \"cpu\" or \"gpu\", not \"" + s + "\"");
}

swgpu::pair_mode parse_mode(const std::string& s) {
    if (s == "auto") return swgpu::pair_mode::automatic;
    if (s == "search") return swgpu::pair_mode::search;
    if (s == "pairwise") return swgpu::pair_mode::pairwise;
    raise(swgpu::exit_code::bad_command_line, "mode must be \"auto\", \"search\" or \"pairwise\", not \"" + s + "\"");
}

// An optional integer keyword: None gives `otherwise`.
long long optional_int(const py::object& o, long long otherwise, const char* name) {
    if (o.is_none()) return otherwise;
    if (!py::isinstance<py::int_>(o) || py::isinstance<py::bool_>(o))
        raise(swgpu::exit_code::bad_command_line, std::string(name) + " must be an integer or None");
    return o.cast<long long>();
}

swgpu::search_settings make_settings(const py::object& matrix, const py::object& gap_open, const py::object& gap_extend,
                                     const py::object& match, const py::object& mismatch, long long max_target_seqs,
                                     double evalue, bool evalues, const std::string& strand, const std::string& seqtype,
                                     const std::string& backend, const py::object& gpus, long long gpu_memory,
                                     long long threads, const std::string& mode, bool seg, bool dust,
                                     long long comp_based_stats, long long max_hsps,
                                     const py::object& zdrop) {
    swgpu::search_settings s;
    if (!matrix.is_none()) {
        if (!py::isinstance<py::str>(matrix))
            raise(swgpu::exit_code::bad_command_line, "matrix must be a name, a file name or None");
        s.matrix = matrix.cast<std::string>();
    }
    const long long go = optional_int(gap_open, -1, "gap_open"), ge = optional_int(gap_extend, -1, "gap_extend");
    if (go < -1 || go > 1000000) raise(swgpu::exit_code::bad_command_line, "gap_open must be >= 0 (or None)");
    if (ge < -1 || ge == 0 || ge > 1000000)
        raise(swgpu::exit_code::bad_command_line, "gap_extend must be >= 1 (or None)");
    s.gap_open = static_cast<int>(go);
    s.gap_extend = static_cast<int>(ge);
    const long long ma = optional_int(match, 2, "match"), mi = optional_int(mismatch, -3, "mismatch");
    if (ma < -1000000 || ma > 1000000 || mi < -1000000 || mi > 1000000)
        raise(swgpu::exit_code::bad_command_line, "match and mismatch must lie within -1000000..1000000");
    s.match = static_cast<int>(ma);
    s.mismatch = static_cast<int>(mi);
    if (max_target_seqs < 1) raise(swgpu::exit_code::bad_command_line, "max_target_seqs must be at least 1");
    s.max_target_seqs = static_cast<std::size_t>(max_target_seqs);
    if (!(evalue > 0)) raise(swgpu::exit_code::bad_command_line, "evalue must be positive");
    s.evalue = evalue;
    s.evalues = evalues;
    s.strand = parse_strand(strand);
    s.type = parse_seqtype(seqtype);
    s.where = parse_backend(backend);
    const long long g = optional_int(gpus, 0, "gpus");
    if (g < 0 || g > 1024) raise(swgpu::exit_code::bad_command_line, "gpus must be None (every GPU) or 1 or more");
    s.gpus = static_cast<int>(g);
    if (gpu_memory < 0) raise(swgpu::exit_code::bad_command_line, "gpu_memory must be 0 (what is free) or more");
    s.gpu_memory = static_cast<std::size_t>(gpu_memory);
    if (threads < 0 || threads > 4096) raise(swgpu::exit_code::bad_command_line, "threads must lie within 0..4096");
    s.threads = static_cast<int>(threads);
    s.mode = parse_mode(mode);
    s.seg = seg;
    s.dust = dust;
    if (comp_based_stats != 0 && comp_based_stats != 1)
        raise(swgpu::exit_code::bad_command_line,
              "comp_based_stats must be 0 or 1, not " + std::to_string(comp_based_stats));
    s.comp_based_stats = static_cast<int>(comp_based_stats);
    if (max_hsps < 1 || max_hsps > 1000000)
        raise(swgpu::exit_code::bad_command_line, "max_hsps must be at least 1, not " + std::to_string(max_hsps));
    s.max_hsps = static_cast<int>(max_hsps);
    const long long z = optional_int(zdrop, -1, "zdrop");
    if (z < 0 && !zdrop.is_none())
        raise(swgpu::exit_code::bad_command_line, "zdrop must be 0 or more (or None: not cut), not " + std::to_string(z));
    if (z > 1000000000) raise(swgpu::exit_code::bad_command_line, "zdrop must be at most 10^9");
    s.zdrop = static_cast<int>(z);
    return s;
}

std::string quoted(const std::string& s) { return py::repr(py::str(s)).cast<std::string>(); }

std::string hit_repr(const swgpu::hit& h) {
    std::ostringstream o;
    o.precision(6);
    o << "Hit(qseqid=" << quoted(h.qseqid) << ", sseqid=" << quoted(h.sseqid) << ", pident=" << h.pident
      << ", length=" << h.length << ", mismatch=" << h.mismatch << ", gapopen=" << h.gapopen << ", qstart=" << h.qstart
      << ", qend=" << h.qend << ", sstart=" << h.sstart << ", send=" << h.send << ", evalue=" << h.evalue
      << ", bitscore=" << h.bitscore << ", score=" << h.score << ", qlen=" << h.qlen << ", slen=" << h.slen
      << ", sstrand=" << quoted(h.sstrand) << ", cigar=" << quoted(h.cigar) << ")";
    return o.str();
}

// The hit's columns by name (Hit.to_dict, equality and pickling). NaN E-values and bit scores become None, so that
// two hits without statistics compare equal.
py::dict hit_dict(const swgpu::hit& h) {
    const auto number = [](double v) { return std::isnan(v) ? py::object(py::none()) : py::object(py::float_(v)); };
    py::dict d;
    d["qseqid"] = h.qseqid, d["sseqid"] = h.sseqid, d["pident"] = h.pident, d["length"] = h.length;
    d["mismatch"] = h.mismatch, d["gapopen"] = h.gapopen, d["qstart"] = h.qstart, d["qend"] = h.qend;
    d["sstart"] = h.sstart, d["send"] = h.send, d["evalue"] = number(h.evalue), d["bitscore"] = number(h.bitscore);
    d["score"] = h.score, d["qlen"] = h.qlen, d["slen"] = h.slen, d["sstrand"] = h.sstrand, d["cigar"] = h.cigar;
    d["nident"] = h.nident, d["positive"] = h.positive, d["gaps"] = h.gaps, d["qseq"] = h.qseq, d["sseq"] = h.sseq;
    return d;
}

swgpu::hit hit_from_dict(const py::dict& d) {
    const auto number = [&](const char* key) {
        const py::object v = d[key];
        return v.is_none() ? std::numeric_limits<double>::quiet_NaN() : v.cast<double>();
    };
    swgpu::hit h;
    h.qseqid = d["qseqid"].cast<std::string>(), h.sseqid = d["sseqid"].cast<std::string>();
    h.pident = d["pident"].cast<double>(), h.length = d["length"].cast<long>();
    h.mismatch = d["mismatch"].cast<long>(), h.gapopen = d["gapopen"].cast<long>();
    h.qstart = d["qstart"].cast<long>(), h.qend = d["qend"].cast<long>();
    h.sstart = d["sstart"].cast<long>(), h.send = d["send"].cast<long>();
    h.evalue = number("evalue"), h.bitscore = number("bitscore"), h.score = d["score"].cast<long>();
    h.qlen = d["qlen"].cast<long>(), h.slen = d["slen"].cast<long>(), h.sstrand = d["sstrand"].cast<std::string>();
    h.cigar = d["cigar"].cast<std::string>(), h.nident = d["nident"].cast<long>();
    h.positive = d["positive"].cast<long>(), h.gaps = d["gaps"].cast<long>();
    h.qseq = d["qseq"].cast<std::string>(), h.sseq = d["sseq"].cast<std::string>();
    return h;
}

// NumPy's element types that swgpu::array holds, in native byte order.
swgpu::dtype element_type(const py::dtype& d) {
    const char kind = d.kind();
    const auto size = d.itemsize();
    if (kind == 'u') {
        if (size == 1) return swgpu::dtype::uint8;
        if (size == 2) return swgpu::dtype::uint16;
        if (size == 4) return swgpu::dtype::uint32;
        if (size == 8) return swgpu::dtype::uint64;
    } else if (kind == 'i') {
        if (size == 1) return swgpu::dtype::int8;
        if (size == 2) return swgpu::dtype::int16;
        if (size == 4) return swgpu::dtype::int32;
        if (size == 8) return swgpu::dtype::int64;
    } else if (kind == 'f') {
        if (size == 4) return swgpu::dtype::float32;
        if (size == 8) return swgpu::dtype::float64;
    }
    raise(swgpu::exit_code::bad_command_line,
          "sat: images of unsigned or signed integers of 8 to 64 bits, float32 or float64, not " +
              py::str(static_cast<const py::object&>(d)).cast<std::string>());
}

py::dtype numpy_type(swgpu::dtype t) {
    switch (t) {
        case swgpu::dtype::uint8: return py::dtype::of<std::uint8_t>();
        case swgpu::dtype::uint16: return py::dtype::of<std::uint16_t>();
        case swgpu::dtype::uint32: return py::dtype::of<std::uint32_t>();
        case swgpu::dtype::uint64: return py::dtype::of<std::uint64_t>();
        case swgpu::dtype::int8: return py::dtype::of<std::int8_t>();
        case swgpu::dtype::int16: return py::dtype::of<std::int16_t>();
        case swgpu::dtype::int32: return py::dtype::of<std::int32_t>();
        case swgpu::dtype::int64: return py::dtype::of<std::int64_t>();
        case swgpu::dtype::float32: return py::dtype::of<float>();
        case swgpu::dtype::float64: return py::dtype::of<double>();
    }
    return py::dtype::of<double>();
}

// A vector's elements as a NumPy array of `shape` that takes them over (no copy: a result held once).
template <class T>
py::array_t<T> adopted(std::vector<T>&& values, std::vector<py::ssize_t> shape) {
    auto* owned = new std::vector<T>(std::move(values));
    py::capsule owner(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
    return py::array_t<T>(std::move(shape), owned->data(), owner);
}

// An image the library reads in place: C-contiguous, in the machine's byte order (the package's functions make it so;
// `what` names the call in messages).
void require_in_place(const py::array& image, const char* what) {
    if (!(image.flags() & py::array::c_style))
        raise(swgpu::exit_code::bad_command_line, std::string(what) + ": the image must be C-contiguous");
    if (!py::cast<bool>(image.dtype().attr("isnative")))
        raise(swgpu::exit_code::bad_command_line, std::string(what) + ": the image must be in the machine's byte order");
}

// The summed-area table of a NumPy image; the result owns its memory.
// Runs `work` (which touches no Python object) without the GIL on a thread of its own, while this thread wakes every
// 50 ms, takes the GIL and runs Python's signal handlers: when one raises (Ctrl-C: KeyboardInterrupt), the library is
// asked to stop (swgpu::stop_calls), the call is waited for, and that exception is raised here, the process as it was
// before the call. Otherwise the call's result, or its error, comes back as if it had run here.
template <class F>
auto interruptible(F&& work) -> decltype(work()) {
    using result_type = decltype(work());
    std::packaged_task<result_type()> task(std::forward<F>(work));
    std::future<result_type> result = task.get_future();
    std::thread worker(std::move(task));
    const auto join = [&] {
        py::gil_scoped_release unlocked;
        worker.join();
    };
    for (;;) {
        bool ready = false;
        {
            py::gil_scoped_release unlocked;
            ready = result.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
        }
        if (ready) break;
        if (PyErr_CheckSignals() != 0) {
            py::error_already_set raised;  // the handler's exception, taken from Python's error state
            {
                const swgpu::stop_calls stop;
                join();
            }
            throw raised;
        }
    }
    join();
    return result.get();
}

py::array sat(const py::array& image, const std::string& backend) {
    const swgpu::backend where = parse_backend(backend);
    if (image.ndim() != 2 && image.ndim() != 3)
        raise(swgpu::exit_code::bad_command_line, "sat: an image of shape (H, W) or (H, W, C), not of " +
                                                      std::to_string(image.ndim()) + " dimensions");
    require_in_place(image, "sat");
    // The image read in place and the table written straight into the NumPy array returned.
    const swgpu::dtype type = element_type(image.dtype());
    const std::vector<std::int64_t> shape(image.shape(), image.shape() + image.ndim());
    swgpu::check_summed_area_table(type, shape);  // before the table is taken
    py::array table(numpy_type(swgpu::summed_area_table_type(type)),
                    std::vector<py::ssize_t>(image.shape(), image.shape() + image.ndim()));
    const void* in = image.data();
    void* out = table.mutable_data();
    interruptible([&] {
        swgpu::summed_area_table_into(type, shape, in, out, where);
        return 0;
    });
    return table;
}

py::array ihist(const py::array& image, int bins, const std::vector<double>& edges, const std::string& backend) {
    const swgpu::backend where = parse_backend(backend);
    if (image.ndim() != 2)
        raise(swgpu::exit_code::bad_command_line, "ihist: a one-channel image of shape (H, W), not of " +
                                                      std::to_string(image.ndim()) + " dimensions");
    require_in_place(image, "ihist");
    // The image read in place and the histogram written straight into the NumPy array returned (held once).
    const swgpu::dtype type = element_type(image.dtype());
    const std::vector<std::int64_t> shape(image.shape(), image.shape() + image.ndim());
    const int b = swgpu::check_integral_histogram(type, shape, bins, edges);  // before the result is taken
    py::array_t<std::uint32_t> out({static_cast<py::ssize_t>(shape[0]), static_cast<py::ssize_t>(shape[1]),
                                    static_cast<py::ssize_t>(b)});
    const void* in = image.data();
    std::uint32_t* counts = out.mutable_data();
    interruptible([&] {
        swgpu::integral_histogram_into(type, shape, in, bins, edges, counts, where);
        return 0;
    });
    return out;
}

using int64_array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
using float64_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

template <class T, class A>
std::vector<T> to_vector(const A& a) {
    return std::vector<T>(a.data(), a.data() + a.size());
}

// x with T x = b, T a triangle of the CSR matrix (indptr, indices, data) of shape (rows, cols).
py::array_t<double> triangular_solve(const int64_array& indptr, const int64_array& indices, const float64_array& data,
                                     std::int64_t rows, std::int64_t cols, const float64_array& b, bool lower,
                                     const std::string& backend) {
    const swgpu::backend where = parse_backend(backend);
    if (b.ndim() != 1)
        raise(swgpu::exit_code::bad_input, "triangular_solve: b must be a vector (one dimension), not of " +
                                               std::to_string(b.ndim()) + " dimensions");
    swgpu::csr_matrix m;
    m.rows = rows;
    m.cols = cols;
    m.indptr = to_vector<std::int64_t>(indptr);
    m.indices = to_vector<std::int64_t>(indices);
    m.data = to_vector<double>(data);
    const std::vector<double> rhs = to_vector<double>(b);
    std::vector<double> x;
    x = interruptible([&] { return swgpu::triangular_solve(m, rhs, lower, where); });
    py::array_t<double> out(static_cast<py::ssize_t>(x.size()));
    if (!x.empty()) std::memcpy(out.mutable_data(), x.data(), x.size() * sizeof(double));
    return out;
}

// SOR on an (N, N) grid: (u, history) with history a dict of NumPy arrays and the run's outcome.
py::tuple sor(const float64_array& f, const float64_array& g, const std::string& method, double omega, double tol,
              int max_sweeps, int layers, int stagnation, const std::string& backend) {
    swgpu::sor_settings s;
    s.where = parse_backend(backend);
    s.method = method;
    s.omega = omega;
    s.tol = tol;
    s.max_sweeps = max_sweeps;
    s.layers = layers;
    s.stagnation = stagnation;
    if (f.ndim() != 2 || f.shape(0) != f.shape(1))
        raise(swgpu::exit_code::bad_input, "sor: f must be a square (N, N) array");
    if (g.ndim() != 2 || g.shape(0) != f.shape(0) || g.shape(1) != f.shape(1))
        raise(swgpu::exit_code::bad_input, "sor: the boundary g must have the shape of f");
    const std::int64_t n = f.shape(0);
    const std::vector<double> fv = to_vector<double>(f), gv = to_vector<double>(g);
    swgpu::sor_result r;
    r = interruptible([&] { return swgpu::poisson_sor(n, fv, gv, s); });
    py::array_t<double> u = adopted(std::move(r.u), {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(n)});
    py::dict history;
    history["sweep"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(r.sweeps.size()), r.sweeps.data());
    history["iteration"] = py::array_t<std::int64_t>(static_cast<py::ssize_t>(r.iterations.size()), r.iterations.data());
    history["residual"] = py::array_t<double>(static_cast<py::ssize_t>(r.residuals.size()), r.residuals.data());
    history["seconds"] = py::array_t<double>(static_cast<py::ssize_t>(r.seconds.size()), r.seconds.data());
    history["converged"] = r.converged;
    history["reason"] = r.reason;
    history["omega"] = r.omega;
    return py::make_tuple(u, history);
}

py::array sweep3d(std::int64_t n, int loops, double c, const std::string& precision, const std::string& backend) {
    const swgpu::backend where = parse_backend(backend);
    swgpu::dtype t = swgpu::dtype::float64;
    if (precision == "single") t = swgpu::dtype::float32;
    else if (precision != "double")
        raise(swgpu::exit_code::bad_command_line,
              "sweep3d: precision must be \"single\" or \"double\", not \"" + precision + "\"");
    // Checked before the NumPy array is taken; the sweep writes straight into it (the grid held once).
    swgpu::check_sweep3d(n, loops, c, t);
    py::array grid(numpy_type(t), std::vector<py::ssize_t>(3, static_cast<py::ssize_t>(n)));
    void* data = grid.mutable_data();
    interruptible([&] {
        swgpu::sweep3d_fmod_into(n, loops, c, t, data, where);
        return 0;
    });
    return grid;
}

// swgpu.Error with the command line's exit code, for every swgpu::error (and out of memory).
void bind_errors(py::module_& m) {
    static py::exception<swgpu::error> error(m, "Error");
    error_type = error.ptr();
    error.attr("exit_code") = py::none();
    error.doc() = "An error of swgpu: str(e) is the message, e.exit_code the exit code the command line would exit "
                  "with (1 bad input, 2 bad settings, 3 device failure, 4 out of memory, 5 output).";
    py::register_exception_translator([](std::exception_ptr p) {
        auto set = [](int code, const char* what) {
            py::object e = py::reinterpret_borrow<py::object>(error_type)(py::str(what));
            e.attr("exit_code") = code;
            PyErr_SetObject(error_type, e.ptr());
        };
        try {
            if (p) std::rethrow_exception(p);
        } catch (const swgpu::error& e) {
            set(static_cast<int>(e.code()), e.what());
        } catch (const std::bad_alloc&) {
            set(static_cast<int>(swgpu::exit_code::out_of_memory), "out of memory");
        }
    });
}

// swgpu.Sequence and swgpu.Hit.
void bind_types(py::module_& m) {
    py::class_<swgpu::sequence>(m, "Sequence", "One record of a FASTA/FASTQ file: .name (the header's first word) and "
                                               ".residues (its letters, a str).")
        .def(py::init<>(), "An empty sequence.")
        .def(py::init([](std::string name, std::string residues) {
                 return swgpu::sequence{std::move(name), std::move(residues)};
             }),
             py::arg("name"), py::arg("residues"), "A sequence of this name and these residues.")
        .def_readwrite("name", &swgpu::sequence::name, "The record's name (the first word of its header).")
        .def_readwrite("residues", &swgpu::sequence::residues, "The record's residues, as letters.")
        .def("__len__", [](const swgpu::sequence& s) { return s.residues.size(); }, "The number of residues.")
        .def("__eq__",
             [](const swgpu::sequence& a, const swgpu::sequence& b) {
                 return a.name == b.name && a.residues == b.residues;
             },
             py::is_operator(), "Same name and residues.")
        .def("__repr__", [](const swgpu::sequence& s) {
            std::string r = s.residues.size() > 20 ? s.residues.substr(0, 20) + "..." : s.residues;
            return "Sequence(name=" + quoted(s.name) + ", residues=" + quoted(r) + ", len=" +
                   std::to_string(s.residues.size()) + ")";
        }, "A short description.")
        .def(py::pickle([](const swgpu::sequence& s) { return py::make_tuple(s.name, s.residues); },
                        [](const py::tuple& t) {
                            if (t.size() != 2) throw std::runtime_error("Sequence: a pickled state of 2 values expected");
                            return swgpu::sequence{t[0].cast<std::string>(), t[1].cast<std::string>()};
                        }));

    py::class_<swgpu::hit>(m, "Hit", "One hit, with the values of `swgpu align`'s BLAST columns: coordinates are 1-based "
                                     "and inclusive; a minus-strand hit has sstart > send.")
        .def_readonly("qseqid", &swgpu::hit::qseqid, "Query name.")
        .def_readonly("sseqid", &swgpu::hit::sseqid, "Subject (database sequence) name.")
        .def_readonly("pident", &swgpu::hit::pident, "100 * identities / length (unrounded).")
        .def_readonly("length", &swgpu::hit::length, "Alignment length (columns).")
        .def_readonly("mismatch", &swgpu::hit::mismatch, "Mismatched columns.")
        .def_readonly("gapopen", &swgpu::hit::gapopen, "Gap openings.")
        .def_readonly("qstart", &swgpu::hit::qstart, "First aligned query position (1-based).")
        .def_readonly("qend", &swgpu::hit::qend, "Last aligned query position.")
        .def_readonly("sstart", &swgpu::hit::sstart, "First aligned subject position (1-based).")
        .def_readonly("send", &swgpu::hit::send, "Last aligned subject position.")
        .def_readonly("evalue", &swgpu::hit::evalue, "E-value (NaN without statistics).")
        .def_readonly("bitscore", &swgpu::hit::bitscore, "Bit score (NaN without statistics).")
        .def_readonly("score", &swgpu::hit::score, "Raw alignment score.")
        .def_readonly("cigar", &swgpu::hit::cigar, "CIGAR of the query against the subject as searched.")
        .def_readonly("qlen", &swgpu::hit::qlen, "Query length.")
        .def_readonly("slen", &swgpu::hit::slen, "Subject length.")
        .def_readonly("sstrand", &swgpu::hit::sstrand, "\"plus\" or \"minus\" for DNA, \"N/A\" for protein.")
        .def_readonly("nident", &swgpu::hit::nident, "Identical columns.")
        .def_readonly("positive", &swgpu::hit::positive, "Columns with a positive substitution score.")
        .def_readonly("gaps", &swgpu::hit::gaps, "Gap columns.")
        .def_readonly("qseq", &swgpu::hit::qseq, "The aligned query segment with '-' for gaps (BLAST's qseq).")
        .def_readonly("sseq", &swgpu::hit::sseq, "The aligned subject segment with '-' for gaps (BLAST's sseq).")
        .def("__repr__", &hit_repr, "Every column, by name.")
        .def("to_dict", &hit_dict,
             "The columns as a dict, named as BLAST's (pandas.DataFrame([h.to_dict() for h in hits]) is a table).")
        .def("__eq__", [](const swgpu::hit& a, const py::object& b) {
                 return py::isinstance<swgpu::hit>(b) && hit_dict(a).equal(hit_dict(b.cast<swgpu::hit>()));
             }, py::is_operator(), "Every column equal (NaN E-values compare equal to NaN).")
        .def(py::pickle([](const swgpu::hit& h) { return hit_dict(h); },
                        [](const py::dict& d) { return hit_from_dict(d); }));
}

// Reading, searching, pairs and the resident database.
void bind_search(py::module_& m) {
    py::class_<swgpu::search_settings>(m, "_Settings", "Search settings (made by swgpu's functions from keywords).");
    m.def("_settings", &make_settings, py::arg("matrix"), py::arg("gap_open"), py::arg("gap_extend"), py::arg("match"),
          py::arg("mismatch"), py::arg("max_target_seqs"), py::arg("evalue"), py::arg("evalues"), py::arg("strand"),
          py::arg("seqtype"), py::arg("backend"), py::arg("gpus"), py::arg("gpu_memory"), py::arg("threads"),
          py::arg("mode"), py::arg("seg"), py::arg("dust"), py::arg("comp_based_stats"), py::arg("max_hsps"),
          py::arg("zdrop"), "search_settings from the keywords of swgpu.search (None: the default).");

    m.def("read_sequences",
          [](const std::string& path) { return interruptible([&] { return swgpu::read_sequences(path); }); },
          py::arg("path"),
          "Every record of a FASTA/FASTQ file (plain, gzip or bgzip) or of a region of an indexed FASTA "
          "(\"genome.fa:chr1:1-500\"), as a list of Sequence.");
    m.def("_search",
          [](const std::vector<swgpu::sequence>& q, const std::vector<swgpu::sequence>& db,
             const swgpu::search_settings& s) { return interruptible([&] { return swgpu::search(q, db, s); }); },
          py::arg("queries"), py::arg("database"), py::arg("settings"), "swgpu::search over lists of Sequence.");
    m.def("_align_pair",
          [](const swgpu::sequence& q, const swgpu::sequence& t, const swgpu::search_settings& s) {
              return interruptible([&] { return swgpu::align_pair(q, t, s); });
          },
          py::arg("query"), py::arg("subject"), py::arg("settings"), "swgpu::align_pair over two Sequence.");
    m.def("_align_pair_all",
          [](const swgpu::sequence& q, const swgpu::sequence& t, const swgpu::search_settings& s) {
              return interruptible([&] { return swgpu::align_pair_all(q, t, s); });
          },
          py::arg("query"), py::arg("subject"), py::arg("settings"), "swgpu::align_pair_all over two Sequence.");
    py::class_<swgpu::database>(m, "_Database", "swgpu::database: records kept encoded, the backend started once.")
        .def(py::init([](const std::string& path, const swgpu::search_settings& s) {
                 return interruptible([&] { return std::make_unique<swgpu::database>(path, s); });
             }),
             py::arg("path"), py::arg("settings"), "A FASTA/FASTQ file, a region or a makedb database.")
        .def(py::init([](const std::vector<swgpu::sequence>& records, const swgpu::search_settings& s) {
                 return interruptible([&] { return std::make_unique<swgpu::database>(records, s); });
             }),
             py::arg("records"), py::arg("settings"), "A list of Sequence.")
        .def("search",
             [](swgpu::database& db, const std::vector<swgpu::sequence>& q) {
                 return interruptible([&] { return db.search(q); });
             },
             py::arg("queries"), "Every query against the database: what swgpu.search gives.")
        .def("__len__", &swgpu::database::size, "The number of records.")
        .def_property_readonly("residues", &swgpu::database::residues, "The number of residues of all records.");
}

// The tables, solvers and sweep over NumPy arrays.
void bind_numerics(py::module_& m) {
    m.def("_ihist", &ihist, py::arg("image"), py::arg("bins"), py::arg("edges"), py::arg("backend"),
          "The integral histogram (uint32, H x W x B) of a C-contiguous native-order array; use swgpu.ihist.");
    m.def("_sat", &sat, py::arg("image"), py::arg("backend"),
          "swgpu::summed_area_table of a C-contiguous, native-order NumPy array of shape (H, W) or (H, W, C).");

    m.def("_triangular_solve", &triangular_solve, py::arg("indptr"), py::arg("indices"), py::arg("data"),
          py::arg("rows"), py::arg("cols"), py::arg("b"), py::arg("lower"), py::arg("backend"),
          "swgpu::triangular_solve of a CSR matrix (indptr, indices, data, rows, cols); use swgpu.triangular_solve.");
    m.def("_sor", &sor, py::arg("f"), py::arg("g"), py::arg("method"), py::arg("omega"), py::arg("tol"),
          py::arg("max_sweeps"), py::arg("layers"), py::arg("stagnation"), py::arg("backend"),
          "swgpu::poisson_sor of (N, N) float64 arrays: (u, history); use swgpu.sor.");
    m.def("gpu_available", &swgpu::gpu_available,
          "Whether backend=\"gpu\" can run here: the package was built with the GPU backend and a GPU is usable.");
    m.def("_sweep3d", &sweep3d, py::arg("n"), py::arg("loops"), py::arg("c"), py::arg("precision"), py::arg("backend"),
          "swgpu::sweep3d_fmod: the (N, N, N) grid; use swgpu.sweep3d.");
}

}  // namespace

PYBIND11_MODULE(_swgpu, m) {
    m.doc() = "swgpu's compiled core: the library face of swgpu (app/swgpu/swgpu.hpp). Use the package swgpu.";
    m.attr("__version__") = SWGPU_VERSION;
    bind_errors(m);
    bind_types(m);
    bind_search(m);
    bind_numerics(m);

    // Shown as swgpu.Error, swgpu.Hit, swgpu.Sequence: the names the package exports.
    for (const char* name : {"Error", "Hit", "Sequence"}) m.attr(name).attr("__module__") = "swgpu";
}
