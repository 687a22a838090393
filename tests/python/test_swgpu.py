"""The Python package swgpu against the command line and NumPy (run by CTest as python_module; by hand:
PYTHONPATH=build/python /usr/bin/python3 -m pytest -q tests/python)."""

import math
import os
import pathlib
import subprocess
import threading

import numpy
import pytest

import swgpu
from blast_text import format_bit_score, format_evalue

SOURCE = pathlib.Path(os.environ.get("SWGPU_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BINARY = pathlib.Path(os.environ.get("SWGPU_BINARY", SOURCE / "build" / "app" / "swgpu"))
QUERIES = SOURCE / "data" / "demo_queries.fa"
DB = SOURCE / "data" / "demo_db.fa"
COLUMNS = "qseqid sseqid pident length mismatch gapopen qstart qend sstart send evalue bitscore score qlen slen"


def as_columns(h):
    return [h.qseqid, h.sseqid, "%.3f" % h.pident] + [str(getattr(h, c)) for c in
                                                       "length mismatch gapopen qstart qend sstart send".split()] + \
        [format_evalue(h.evalue), format_bit_score(h.bitscore), str(h.score), str(h.qlen), str(h.slen)]


def key(h):
    return tuple(getattr(h, c) for c in COLUMNS.split() + ["cigar", "sstrand"])


def cli(*args):
    if not BINARY.exists():
        pytest.skip("no swgpu program at %s" % BINARY)
    out = subprocess.run([str(BINARY), "align", *map(str, args), "--outfmt", "6 " + COLUMNS], check=True,
                         capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


@pytest.fixture(scope="module")
def demo_hits():
    return swgpu.search(str(QUERIES), str(DB), max_target_seqs=5)


def test_read_sequences():
    qs = swgpu.read_sequences(str(QUERIES))
    assert len(qs) == 4
    assert qs[0].name.startswith("gi|122087146")
    assert qs[0].residues.startswith("MGFTEKQEALVNSSSQLFKQ")
    assert len(qs[0]) == len(qs[0].residues)
    assert "Sequence(" in repr(qs[0])


def test_search_equals_command_line(demo_hits):
    expected = cli(QUERIES, DB, "--max-target-seqs", 5)
    assert len(demo_hits) == len(expected) > 0
    assert [as_columns(h) for h in demo_hits] == expected
    assert all(h.sstrand == "N/A" and h.cigar for h in demo_hits)
    assert repr(demo_hits[0]).startswith("Hit(qseqid=")


def test_search_settings_equal_command_line():
    hits = swgpu.search(QUERIES, DB, matrix="BLOSUM45", gap_open=14, gap_extend=2, max_target_seqs=3, evalue=1e-5)
    expected = cli(QUERIES, DB, "--matrix", "BLOSUM45", "--gap-open", 14, "--gap-extend", 2, "--max-target-seqs", 3,
                   "-e", "1e-5")
    assert [as_columns(h) for h in hits] == expected


def test_tuples_and_sequences_give_the_same_hits(demo_hits):
    queries = [(s.name, s.residues) for s in swgpu.read_sequences(str(QUERIES))]
    database = [(s.name, s.residues) for s in swgpu.read_sequences(str(DB))]
    from_tuples = swgpu.search(queries, database, max_target_seqs=5)
    assert [key(h) for h in from_tuples] == [key(h) for h in demo_hits]
    from_sequences = swgpu.search(swgpu.read_sequences(str(QUERIES)), pathlib.Path(DB), max_target_seqs=5)
    assert [key(h) for h in from_sequences] == [key(h) for h in demo_hits]


def test_database_searched_twice_and_from_two_threads(demo_hits):
    db = swgpu.Database(DB, max_target_seqs=5)
    assert len(db) == 1000
    assert db.residues > 0
    expected = [key(h) for h in demo_hits]
    assert [key(h) for h in db.search(QUERIES)] == expected
    assert [key(h) for h in db.search(str(QUERIES))] == expected

    results, errors = [None, None], []

    def run(k):
        try:
            results[k] = [key(h) for h in db.search(QUERIES)]
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == [expected, expected]


def test_database_of_records():
    records = swgpu.read_sequences(str(DB))[:50]
    db = swgpu.Database(records, max_target_seqs=2)
    assert len(db) == 50
    assert db.residues == sum(len(r.residues) for r in records)
    q = swgpu.read_sequences(str(QUERIES))[:1]
    assert [key(h) for h in db.search(q)] == [key(h) for h in swgpu.search(q, records, max_target_seqs=2)]


def test_align_pair_equals_command_line(tmp_path):
    q = swgpu.read_sequences(str(QUERIES))[0]
    s = swgpu.read_sequences(str(DB))[3]
    (tmp_path / "q.fa").write_text(">%s\n%s\n" % (q.name, q.residues))
    (tmp_path / "s.fa").write_text(">%s\n%s\n" % (s.name, s.residues))
    h = swgpu.align_pair(q, (s.name, s.residues))
    expected = cli(tmp_path / "q.fa", tmp_path / "s.fa", "-e", "1e300")
    if expected:
        assert as_columns(h) == expected[0]
    else:
        assert h.score == 0


def test_align_pair_textbook():
    # Durbin et al.'s example: BLOSUM50, linear gap cost 8 (open 0, extend 8; no E-value parameters for it): the best
    # local alignment scores 28, AWGHE against AW-HE.
    h = swgpu.align_pair("HEAGAWGHEE", "PAWHEAE", matrix="BLOSUM50", gap_open=0, gap_extend=8, evalues=False)
    assert h.qseqid == "query" and h.sseqid == "subject"
    assert h.score == 28
    assert (h.qstart, h.qend, h.sstart, h.send) == (5, 9, 2, 5)
    assert h.gapopen == 1 and h.cigar == "2M1I2M"
    assert math.isnan(h.evalue) and math.isnan(h.bitscore)


def test_align_pair_dna_minus_strand():
    h = swgpu.align_pair("ACGTTGCAAGGCTTAA", "TTAAGCCTTGCAACGT")
    assert h.sstrand == "minus"
    assert h.sstart > h.send
    assert h.length == 16 and h.mismatch == 0


@pytest.mark.parametrize("dtype", [numpy.uint8, numpy.uint16, numpy.float32, numpy.float64])
def test_sat_equals_cumsum(dtype):
    rng = numpy.random.default_rng(7)
    a = (rng.random((37, 53)) * 200).astype(dtype)
    if a.dtype.kind == "f":
        a[0, 3] = -0.0  # a negative zero first in its row and column keeps its sign, as in NumPy's cumsum
        a[5, 0] = -0.0
        a[0, 0] = -0.0
    # Float tables are NumPy's own sums, bit for bit, on every backend: along the rows first, then down the columns.
    expected = numpy.cumsum(numpy.cumsum(a.astype(numpy.float64 if a.dtype.kind == "f" else numpy.uint64), 1), 0)
    for backend in ("cpu", "auto"):
        s = swgpu.sat(a, backend=backend)
        assert s.shape == a.shape
        assert s.dtype == expected.dtype
        assert s.tobytes() == expected.tobytes()
        assert s.flags.owndata or s.base is not None
        assert s.flags.writeable


def test_sat_layouts():
    rng = numpy.random.default_rng(11)
    base = rng.integers(-100, 100, size=(40, 30), dtype=numpy.int16)
    for a in (numpy.asfortranarray(base), base[::2, 1::3], base.T, base.astype(">i2"), base[:, :, None].repeat(3, 2)):
        s = swgpu.sat(a)
        assert s.dtype == numpy.int64
        assert numpy.array_equal(s, numpy.cumsum(numpy.cumsum(a.astype(numpy.int64), 0), 1))
    assert swgpu.sat([[1, 2], [3, 4]], dtype=numpy.uint8).tolist() == [[1, 3], [4, 10]]
    del base
    s = swgpu.sat(numpy.ones((3, 3), numpy.uint8))
    assert s[2, 2] == 9  # the result outlives its input


def test_sat_backend_cpu_and_refusals():
    a = numpy.arange(12, dtype=numpy.uint8).reshape(3, 4)
    assert swgpu.sat(a, backend="cpu")[-1, -1] == 66
    with pytest.raises(swgpu.Error) as e:
        swgpu.sat(a, backend="y")
    assert e.value.exit_code == 2
    with pytest.raises(swgpu.Error) as e:
        swgpu.sat(numpy.zeros((2, 2, 2, 2), numpy.uint8))
    assert e.value.exit_code == 2
    for bad in (numpy.zeros((2, 2), numpy.complex64), numpy.zeros((2, 2), bool), numpy.zeros((2, 2), numpy.float16)):
        with pytest.raises(swgpu.Error) as e:
            swgpu.sat(bad)
        assert e.value.exit_code == 2


def exit_code_of(call):
    with pytest.raises(swgpu.Error) as e:
        call()
    assert "\n" not in str(e.value) and str(e.value)
    return e.value.exit_code


def test_errors_carry_exit_codes(tmp_path):
    q = [("q", "MKTAYIAKQRQISFVKSHFSRQ")]
    missing = str(tmp_path / "missing.fa")
    assert exit_code_of(lambda: swgpu.read_sequences(missing)) == 1
    assert exit_code_of(lambda: swgpu.search(missing, q)) == 1
    assert exit_code_of(lambda: swgpu.Database(missing)) == 1
    assert exit_code_of(lambda: swgpu.search(q, q, strand="x")) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, backend="y")) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, seqtype="rna")) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, matrix="NOSUCHMATRIX")) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, max_target_seqs=0)) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, evalue=-1)) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, gap_extend=0)) == 2
    assert exit_code_of(lambda: swgpu.search(q, q, threads=-1)) == 2
    assert exit_code_of(lambda: swgpu.search([("q", "AC1T")], q)) == 1
    assert exit_code_of(lambda: swgpu.search([], q)) == 1
    assert exit_code_of(lambda: swgpu.search([("q", "ACGT", "x")], q)) == 1
    assert exit_code_of(lambda: swgpu.align_pair("", "ACGT")) == 1
    assert issubclass(swgpu.Error, Exception)


def test_docstrings():
    for f in (swgpu.read_sequences, swgpu.search, swgpu.align_pair, swgpu.sat, swgpu.Database, swgpu.Database.search,
              swgpu.Error, swgpu.Hit, swgpu.Sequence):
        assert f.__doc__ and f.__doc__.strip()


def _ihist_reference(bin_of_pixel, bins):
    """The integral histogram from a bin index per pixel (bins: in no bin), by NumPy cumulative sums."""
    onehot = numpy.stack([(bin_of_pixel == b) for b in range(bins)], axis=2).astype(numpy.uint64)
    return numpy.cumsum(numpy.cumsum(onehot, 0), 1).astype(numpy.uint32)


def test_ihist_equals_numpy():
    rng = numpy.random.default_rng(13)
    a8 = rng.integers(0, 256, size=(29, 41), dtype=numpy.uint8)
    for bins in (1, 3, 16, 256):
        h = swgpu.ihist(a8, bins)
        assert h.dtype == numpy.uint32 and h.shape == (29, 41, bins)
        assert numpy.array_equal(h, _ihist_reference(a8.astype(numpy.int64) * bins // 256, bins))
    a16 = rng.integers(0, 65536, size=(17, 23), dtype=numpy.uint16)
    assert numpy.array_equal(swgpu.ihist(a16, 7), _ihist_reference(a16.astype(numpy.int64) * 7 // 65536, 7))
    # edges as numpy.histogram: half-open bins, the last closed, values outside in no bin
    f = rng.random((19, 31)) * 12 - 1
    edges = [0.0, 2.5, 5.0, 10.0]
    idx = numpy.searchsorted(edges, f, side="right") - 1
    idx[f == edges[-1]] = len(edges) - 2
    idx[(f < edges[0]) | (f > edges[-1])] = len(edges)
    h = swgpu.ihist(f, edges=edges)
    assert numpy.array_equal(h, _ihist_reference(idx, len(edges) - 1))
    assert numpy.array_equal(h[-1, -1], numpy.histogram(f, bins=edges)[0])
    assert numpy.array_equal(swgpu.ihist(numpy.asfortranarray(a8), 4), swgpu.ihist(a8, 4, backend="cpu"))


def test_ihist_refusals():
    with pytest.raises(swgpu.Error) as e:
        swgpu.ihist(numpy.zeros((3, 3, 2), numpy.uint8), 4)
    assert e.value.exit_code == 2
    with pytest.raises(swgpu.Error) as e:
        swgpu.ihist(numpy.zeros((3, 3), numpy.uint8), 0)
    assert e.value.exit_code == 2
    with pytest.raises(swgpu.Error) as e:
        swgpu.ihist(numpy.zeros((3, 3), numpy.uint8), edges=[2.0, 1.0])
    assert e.value.exit_code == 2
    with pytest.raises(swgpu.Error) as e:
        swgpu.ihist(numpy.zeros((3, 3), numpy.uint8))
    assert e.value.exit_code == 2


def run_cli(*args):
    """The command line's `swgpu ARGS...` (skipped without the program): its CompletedProcess."""
    if not BINARY.exists():
        pytest.skip("no swgpu program at %s" % BINARY)
    return subprocess.run([str(BINARY), *map(str, args)], capture_output=True, text=True)


def _triangular(n, seed, lower=True, density=0.004):
    """A random well-conditioned triangular matrix (diagonally dominant) as scipy CSR, with the full matrix it is cut
    from."""
    import scipy.sparse

    rng = numpy.random.default_rng(seed)
    a = scipy.sparse.random(n, n, density=density, random_state=rng, format="csr") * 2 - \
        scipy.sparse.random(n, n, density=density, random_state=rng, format="csr")
    t = scipy.sparse.tril(a, -1) if lower else scipy.sparse.triu(a, 1)
    d = numpy.asarray(abs(t).sum(axis=1)).ravel() + 1 + rng.random(n)
    return (t + scipy.sparse.diags(d * numpy.where(rng.random(n) < 0.5, -1, 1))).tocsr(), a


def _backward_error(t, x, b):
    r = b - t @ x
    return numpy.abs(r).max() / (abs(t).sum(axis=1).max() * numpy.abs(x).max() + numpy.abs(b).max())


@pytest.mark.parametrize("lower", [True, False])
def test_triangular_solve_equals_scipy(lower):
    import scipy.sparse.linalg

    for n, seed in ((1, 1), (37, 2), (3000, 3)):
        t, _ = _triangular(n, seed, lower)
        b = numpy.random.default_rng(seed).standard_normal(n)
        x = swgpu.triangular_solve(t, b, lower=lower)
        assert x.dtype == numpy.float64 and x.shape == (n,)
        expected = scipy.sparse.linalg.spsolve_triangular(t, b, lower=lower)
        assert _backward_error(t, x, b) < 1e-12
        numpy.testing.assert_allclose(x, expected, rtol=1e-10, atol=1e-12 * numpy.abs(expected).max())
        assert numpy.array_equal(x, swgpu.triangular_solve(t, b, lower=lower, backend="cpu"))


def test_triangular_solve_inputs():
    import scipy.sparse

    t, full = _triangular(200, 5, True)
    b = numpy.linspace(-1, 1, 200)
    x = swgpu.triangular_solve(t, b)
    # the same from CSC, COO, a dense array, a CSR tuple and a full matrix whose upper part is dropped
    assert numpy.array_equal(swgpu.triangular_solve(t.tocsc(), b), x)
    assert numpy.array_equal(swgpu.triangular_solve(t.tocoo(), b), x)
    assert numpy.array_equal(swgpu.triangular_solve(t.toarray(), b), x)
    assert numpy.array_equal(swgpu.triangular_solve((t.indptr, t.indices, t.data, t.shape), b), x)
    assert numpy.array_equal(swgpu.triangular_solve(t + scipy.sparse.triu(full, 1), b), x)
    assert numpy.array_equal(swgpu.triangular_solve(t, list(b)), x)
    # duplicates are summed, columns in any order
    coo = t.tocoo()
    dup = scipy.sparse.coo_matrix((numpy.concatenate([coo.data / 2, coo.data / 2]),
                                   (numpy.concatenate([coo.row, coo.row]), numpy.concatenate([coo.col, coo.col]))),
                                  shape=t.shape).tocsr(copy=False)
    numpy.testing.assert_allclose(swgpu.triangular_solve(dup, b), x, rtol=1e-12)


def test_triangular_solve_equals_command_line(tmp_path):
    import scipy.io

    for lower in (True, False):
        t, _ = _triangular(500, 8, lower)
        b = numpy.random.default_rng(9).standard_normal(500)
        scipy.io.mmwrite(str(tmp_path / "t.mtx"), t.tocoo(), precision=17)
        numpy.save(tmp_path / "b.npy", b)
        r = run_cli("levels", "--matrix", tmp_path / "t.mtx", "--rhs", tmp_path / "b.npy", "-o", tmp_path / "x.npy",
                    "--lower" if lower else "--upper", "-q", "--backend", "cpu")
        assert r.returncode == 0, r.stderr
        assert numpy.array_equal(numpy.load(tmp_path / "x.npy"), swgpu.triangular_solve(t, b, lower=lower))


def test_triangular_solve_errors():
    t, _ = _triangular(10, 4, True)
    b = numpy.ones(10)
    assert exit_code_of(lambda: swgpu.triangular_solve(numpy.ones((3, 4)), numpy.ones(3))) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(numpy.zeros((0, 0)), numpy.ones(0))) == 1
    z = t.toarray()
    z[4, 4] = 0
    assert exit_code_of(lambda: swgpu.triangular_solve(z, b)) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(numpy.tril(numpy.ones((3, 3)))[:, ::-1], numpy.ones(3))) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(t, numpy.ones(9))) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(t, numpy.ones((10, 2)))) == 1
    bad = t.copy()
    bad.data[0] = numpy.nan
    assert exit_code_of(lambda: swgpu.triangular_solve(bad, b)) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(t, numpy.where(numpy.arange(10) == 3, numpy.inf, 1.0))) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve((t.indptr, t.indices + 20, t.data, t.shape), b)) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(t, b, backend="y")) == 2


def _poisson_problem(n, seed):
    rng = numpy.random.default_rng(seed)
    f = rng.standard_normal((n, n))
    g = numpy.zeros((n, n))
    g[0, :], g[-1, :], g[:, 0], g[:, -1] = rng.random(n), rng.random(n), rng.random(n), rng.random(n)
    g[1:-1, 1:-1] = 1e9  # the boundary's interior is ignored
    return f, g


def _poisson_reference(f, g):
    """The 5-point Laplacian's discrete solution by scipy.sparse.linalg.spsolve, boundary included."""
    import scipy.sparse
    import scipy.sparse.linalg

    n = f.shape[0]
    m = n - 2
    h2 = (1.0 / (n - 1)) ** 2
    one = scipy.sparse.diags([-numpy.ones(m - 1), 2 * numpy.ones(m), -numpy.ones(m - 1)], [-1, 0, 1])
    a = scipy.sparse.kronsum(one, one).tocsc()  # 4u - neighbours, row-major interior unknowns
    rhs = h2 * f[1:-1, 1:-1].copy()
    rhs[0, :] += g[0, 1:-1]
    rhs[-1, :] += g[-1, 1:-1]
    rhs[:, 0] += g[1:-1, 0]
    rhs[:, -1] += g[1:-1, -1]
    u = g.copy()
    u[1:-1, 1:-1] = scipy.sparse.linalg.spsolve(a, rhs.ravel()).reshape(m, m)
    return u


@pytest.mark.parametrize("method", ["lex", "redblack", "ssor", "mlssor"])
def test_sor_equals_spsolve(method):
    f, g = _poisson_problem(24, 3)
    u, h = swgpu.sor(f, g, method=method, tol=1e-12)
    assert h["converged"] and h["reason"] == "converged"
    assert h["residual"][-1] <= 1e-12 and len(h["sweep"]) == len(h["residual"]) == len(h["seconds"])
    # One entry per iteration (the residual is checked after each); an iteration is 1 sweep (lex, red-black), 2 (ssor)
    # or 2K (mlssor, K = 3 layers by default), and the history counts sweeps.
    per = {"lex": 1, "redblack": 1, "ssor": 2, "mlssor": 6}[method]
    assert h["sweep"].dtype == numpy.int64 and h["iteration"][-1] == len(h["iteration"]) == len(h["sweep"])
    assert numpy.array_equal(h["sweep"], per * h["iteration"])
    expected = _poisson_reference(f, g)
    assert numpy.abs(u - expected).max() <= 1e-9 * numpy.abs(expected).max()
    assert numpy.array_equal(u[0], g[0]) and numpy.array_equal(u[:, -1], g[:, -1])


def test_sor_equals_command_line(tmp_path):
    f, g = _poisson_problem(19, 4)
    numpy.save(tmp_path / "f.npy", f)
    numpy.save(tmp_path / "g.npy", g)
    for method, extra, keywords in (("lex", [], {}), ("redblack", ["--omega", "1.5"], {"omega": 1.5}),
                                    ("mlssor", ["--layers", "2"], {"layers": 2})):
        r = run_cli("sor", "--rhs", tmp_path / "f.npy", "--boundary", tmp_path / "g.npy", "-o", tmp_path / "u.npy",
                    "--method", method, "--tol", "1e-10", "--backend", "cpu", *extra)
        assert r.returncode == 0, r.stderr
        u, h = swgpu.sor(f, g, method=method, tol=1e-10, backend="cpu", **keywords)
        assert numpy.array_equal(numpy.load(tmp_path / "u.npy"), u)
        assert " sweeps %d " % h["sweep"][-1] in r.stdout
    # stopped above tol: exit code 6 on the command line, the result and the reason here
    r = run_cli("sor", "--rhs", tmp_path / "f.npy", "--boundary", tmp_path / "g.npy", "-o", tmp_path / "u.npy",
                "--max-sweeps", "3", "--backend", "cpu")
    assert r.returncode == 6
    u, h = swgpu.sor(f, g, max_sweeps=3, backend="cpu")
    assert not h["converged"] and h["reason"] == "max_sweeps" and list(h["sweep"]) == [1, 2, 3]
    assert numpy.array_equal(numpy.load(tmp_path / "u.npy"), u)


def test_sor_errors():
    f, g = _poisson_problem(8, 5)
    assert exit_code_of(lambda: swgpu.sor(f[:, :7], g)) == 1
    assert exit_code_of(lambda: swgpu.sor(f, g[:7, :7])) == 1
    assert exit_code_of(lambda: swgpu.sor(f[:2, :2], g[:2, :2])) == 1
    nan = f.copy()
    nan[3, 3] = numpy.nan
    assert exit_code_of(lambda: swgpu.sor(nan, g)) == 1
    assert exit_code_of(lambda: swgpu.sor(f, g, method="jacobi")) == 2
    assert exit_code_of(lambda: swgpu.sor(f, g, omega=2.5)) == 2
    assert exit_code_of(lambda: swgpu.sor(f, g, tol=0)) == 2
    assert exit_code_of(lambda: swgpu.sor(f, g, max_sweeps=0)) == 2
    assert exit_code_of(lambda: swgpu.sor(f, g, backend="y")) == 2


def _sweep3d_loop(n, loops, c):
    a = numpy.fromfunction(lambda i, j, k: ((i + 2 * j + 3 * k) % 10) / 10, (n, n, n))
    for i in range(n):
        for j in range(n):
            for k in range(n):
                r = a[i, j, k]
                top = a[i - 1, j, k] if i else 0.0
                north = a[i, j - 1, k] if j else 0.0
                west = a[i, j, k - 1] if k else 0.0
                for _ in range(loops):
                    r = math.fmod(((r + top) + north) + west, c)
                a[i, j, k] = r
    return a


def test_sweep3d_equals_plain_loop():
    for n, loops, c in ((1, 1, 1.0), (5, 1, 1.0), (7, 3, 0.7)):
        a = swgpu.sweep3d(n, loops=loops, c=c)
        assert a.shape == (n, n, n) and a.dtype == numpy.float64
        assert numpy.array_equal(a, _sweep3d_loop(n, loops, c))
    assert swgpu.sweep3d(6, precision="single").dtype == numpy.float32


def test_sweep3d_equals_command_line(tmp_path):
    for precision, loops in (("double", 2), ("single", 1)):
        r = run_cli("sweep3d", "--n", 20, "--loops", loops, "--precision", precision, "--backend", "cpu", "-o",
                    tmp_path / "a.npy")
        assert r.returncode == 0, r.stderr
        assert numpy.array_equal(numpy.load(tmp_path / "a.npy"), swgpu.sweep3d(20, loops=loops, precision=precision))


def test_sweep3d_errors():
    assert exit_code_of(lambda: swgpu.sweep3d(0)) == 2
    assert exit_code_of(lambda: swgpu.sweep3d(5000)) == 2
    assert exit_code_of(lambda: swgpu.sweep3d(4, loops=0)) == 2
    assert exit_code_of(lambda: swgpu.sweep3d(4, c=0)) == 2
    assert exit_code_of(lambda: swgpu.sweep3d(4, precision="half")) == 2
    assert exit_code_of(lambda: swgpu.sweep3d(4, backend="y")) == 2


def test_new_docstrings_and_stubs():
    for f in (swgpu.triangular_solve, swgpu.sor, swgpu.sweep3d, swgpu.ihist):
        assert f.__doc__ and f.__doc__.strip()
    stub = pathlib.Path(swgpu.__file__).with_name("__init__.pyi")
    assert stub.exists()
    text = stub.read_text()
    for name in swgpu.__all__:
        assert ("def %s(" % name) in text or ("class %s" % name) in text, name


# ---- masking, composition-based statistics, Ctrl-C -------------------------------------------------------------------

def test_seg_and_composition_statistics_equal_command_line(tmp_path):
    first = swgpu.read_sequences(str(QUERIES))[0]
    q = tmp_path / "q.fa"
    q.write_text(">lowq\n%s%s\n" % (first.residues, "Q" * 40))
    db = tmp_path / "db.fa"
    db.write_text(DB.read_text() + ">polyQ\n%s\n" % ("Q" * 60))
    plain = swgpu.search(q, db, max_target_seqs=5)
    masked = swgpu.search(q, db, max_target_seqs=5, seg=True)
    # The poly-Q subject matches the query's Q run (40 x Q:Q = 200) unless SEG masks that run as X.
    assert "polyQ" in [h.sseqid for h in plain]
    assert "polyQ" not in [h.sseqid for h in masked]
    assert [as_columns(h) for h in masked] == cli(q, db, "--max-target-seqs", 5, "--seg", "yes")
    resident = swgpu.Database(db, max_target_seqs=5, seg=True)
    assert [key(h) for h in resident.search(q)] == [key(h) for h in masked]

    cbs = swgpu.search(QUERIES, DB, max_target_seqs=5, comp_based_stats=1)
    assert [as_columns(h) for h in cbs] == cli(QUERIES, DB, "--max-target-seqs", 5, "--comp-based-stats", 1)
    standard = swgpu.search(QUERIES, DB, max_target_seqs=5)
    assert [h.evalue for h in cbs] != [h.evalue for h in standard]


def test_dust_equals_command_line(tmp_path):
    rng = numpy.random.default_rng(11)
    letters = numpy.array(list("ACGT"))

    def dna(n):
        return "".join(rng.choice(letters, n))

    q = tmp_path / "q.fa"
    q.write_text(">readq\n%s%s%s\n" % (dna(200), "CA" * 40, dna(100)))
    db = tmp_path / "db.fa"
    db.write_text("".join(">s%d\n%s\n" % (k, dna(400)) for k in range(20)) + ">repeat\n%s%s\n" % (dna(50), "CA" * 80))
    plain = swgpu.search(q, db, max_target_seqs=5)
    masked = swgpu.search(q, db, max_target_seqs=5, dust=True)
    assert "repeat" in [h.sseqid for h in plain]
    assert "repeat" not in [h.sseqid for h in masked]
    assert [as_columns(h) for h in masked] == cli(q, db, "--max-target-seqs", 5, "--dust", "yes")


def test_max_hsps_equals_command_line(tmp_path):
    q = tmp_path / "q.fa"
    q.write_text(">q\nMKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEG\n")
    db = tmp_path / "db.fa"
    db.write_text(">s1\nGGGGKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEGGGGGGPPPPPMKTAYIAKQRQISFVKSHFSRQLEERLGWWWWKALPDAQFEVVHSLAKW\n"
                  ">s2\nPPPPPPPPTLGQHDFSAGEGPPPPPPP\n")
    one = swgpu.search(q, db)
    several = swgpu.search(q, db, max_hsps=4)
    assert len(several) > len(one)
    assert [as_columns(h) for h in several] == cli(q, db, "--max-hsps", 4)
    assert [key(h) for h in swgpu.Database(db, max_hsps=4).search(q)] == [key(h) for h in several]
    # With composition-based statistics too: the command line's rows.
    adjusted = swgpu.search(q, db, max_hsps=4, comp_based_stats=1)
    assert len(adjusted) > len(swgpu.search(q, db, comp_based_stats=1))
    assert [as_columns(h) for h in adjusted] == cli(q, db, "--max-hsps", 4, "--comp-based-stats", 1)


def test_masking_and_composition_settings_refused():
    for settings in ({"dust": True}, {"comp_based_stats": 2}, {"comp_based_stats": 1, "evalues": False},
                     {"seg": "yes"}, {"max_hsps": 0}):
        with pytest.raises(swgpu.Error) as e:
            swgpu.search(QUERIES, DB, **settings)
        assert e.value.exit_code == 2, settings


def interrupt_after(seconds):
    """Sends this process SIGINT (Ctrl-C) from another thread after `seconds`."""
    import signal
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_stops_a_long_pair_and_the_module_goes_on():
    rng = numpy.random.default_rng(3)
    letters = numpy.frombuffer(b"ACGT", dtype=numpy.uint8)
    a, b = (letters[rng.integers(0, 4, 300000)].tobytes().decode() for _ in range(2))
    import time
    timer = interrupt_after(0.5)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        swgpu.align_pair(a, b, backend="cpu", strand="plus")  # 9e10 cells: a minute or more on a few cores
    timer.join()
    assert time.monotonic() - started < 10
    h = swgpu.align_pair("ACGTTGCAAGGCTTAA", "TTAAGCCTTGCAACGT", backend="cpu")
    assert h.sstrand == "minus" and h.length == 16 and h.mismatch == 0


def test_ctrl_c_stops_a_database_search_and_the_database_goes_on():
    rng = numpy.random.default_rng(4)
    letters = numpy.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", dtype=numpy.uint8)

    def proteins(count, prefix):
        text = letters[rng.integers(0, 20, count * 400)].tobytes().decode()
        return [("%s%d" % (prefix, k), text[400 * k:400 * (k + 1)]) for k in range(count)]

    records, queries = proteins(20000, "s"), proteins(300, "q")
    db = swgpu.Database(records, max_target_seqs=3, backend="cpu")
    import time
    timer = interrupt_after(0.5)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        db.search(queries)  # 9.6e11 cells
    timer.join()
    assert time.monotonic() - started < 10
    one = [records[7]]
    hits = db.search(one)
    assert hits[0].sseqid == "s7" and hits[0].qstart == 1 and hits[0].qend == 400


def test_align_pair_without_alignment_has_no_evalue():
    # A pair with no positive-scoring alignment: E-value and bit score NaN, so that no E-value filter passes it.
    import math
    h = swgpu.align_pair("WWWW", "PPPP")
    assert h.score == 0
    assert math.isnan(h.evalue)
    assert math.isnan(h.bitscore)
    assert not (h.evalue <= 10)


def test_complex_arrays_refused():
    # The conversion to float64 would drop the imaginary part with only a NumPy warning; the command line refuses
    # complex files: exit code 1 here too.
    import scipy.sparse
    f = numpy.ones((8, 8)) * (1 + 2j)
    g = numpy.zeros((8, 8))
    assert exit_code_of(lambda: swgpu.sor(f, g, backend="cpu")) == 1
    assert exit_code_of(lambda: swgpu.sor(g, f, backend="cpu")) == 1
    T = scipy.sparse.eye(4, format="csr")
    assert exit_code_of(lambda: swgpu.triangular_solve(T, numpy.ones(4) * 1j, backend="cpu")) == 1
    assert exit_code_of(lambda: swgpu.triangular_solve(T * (1 + 1j), numpy.ones(4), backend="cpu")) == 1


def test_sweep3d_too_large_is_refused_before_allocation():
    # 4096^3 float64, held twice: 1 TiB. Refused with exit code 4 before anything is taken (it was killed by the
    # kernel instead).
    assert exit_code_of(lambda: swgpu.sweep3d(4096, backend="cpu")) == 4


# ---- the package as a user handles it: columns, pickling, equality, version, mistakes ----------------------------

def test_hits_carry_nident_positive_gaps_and_the_aligned_rows_as_the_command_line(tmp_path):
    hits = swgpu.search(QUERIES, DB, max_target_seqs=3)
    if not BINARY.exists():
        pytest.skip("no swgpu program at %s" % BINARY)
    out = subprocess.run([str(BINARY), "align", str(QUERIES), str(DB), "-k", "3", "--outfmt",
                          "6 qseqid sseqid nident positive gaps qseq sseq"], check=True, capture_output=True,
                         text=True).stdout
    rows = [line.split("\t") for line in out.splitlines() if line]
    assert len(rows) == len(hits) > 0
    for h, r in zip(hits, rows):
        assert [h.qseqid, h.sseqid, str(h.nident), str(h.positive), str(h.gaps), h.qseq, h.sseq] == r
        assert len(h.qseq) == len(h.sseq) == h.length


def test_hits_and_sequences_pickle_compare_and_export(demo_hits):
    import pickle
    again = pickle.loads(pickle.dumps(demo_hits))
    assert again == demo_hits and again is not demo_hits
    assert demo_hits[0] != demo_hits[1]
    d = demo_hits[0].to_dict()
    assert d["sseqid"] == demo_hits[0].sseqid and d["evalue"] == demo_hits[0].evalue and d["qseq"] == demo_hits[0].qseq
    assert set(COLUMNS.split()) <= set(d)
    s = swgpu.Sequence("q1", "MKTAYIAKQR")
    assert pickle.loads(pickle.dumps(s)) == s
    # Without statistics the E-value is NaN, which is None in the dict, so such hits still compare equal.
    bare = swgpu.search(QUERIES, DB, max_target_seqs=1, evalues=False)
    assert bare[0].to_dict()["evalue"] is None and pickle.loads(pickle.dumps(bare)) == bare


def test_version_is_the_command_lines():
    assert swgpu.__version__ and swgpu.__version__[0].isdigit()
    if BINARY.exists():
        out = subprocess.run([str(BINARY), "--version"], check=True, capture_output=True, text=True).stdout
        assert ("swgpu " + swgpu.__version__ + " ") in out


def test_residues_given_where_a_path_is_expected_are_one_clear_error():
    with pytest.raises(swgpu.Error) as e:
        swgpu.search("MKTAYIAKQRQISFVKSHFSRQLEERLGLIEV", DB)
    assert e.value.exit_code == 1 and "is no file" in str(e.value) and "(\"name\"" in str(e.value)
    with pytest.raises(swgpu.Error):
        swgpu.Database("MKTAYIAKQR")


def test_align_pair_refuses_several_alignments_and_names_the_call_that_gives_them():
    with pytest.raises(swgpu.Error) as e:
        swgpu.align_pair("HEAGAWGHEE", "PAWHEAE", max_hsps=3)
    assert e.value.exit_code == 2 and "max_hsps" in str(e.value) and "align_pair_all" in str(e.value)


def test_the_package_metadata_is_pyprojects_and_its_version_the_modules():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11
    meta = tomllib.loads((SOURCE / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "swgpu" and "numpy" in meta["project"]["dependencies"]
    assert meta["project"]["dynamic"] == ["version"]
    cmake = (SOURCE / "CMakeLists.txt").read_text()
    assert ("project(swgpu VERSION " + swgpu.__version__ + " ") in cmake or \
           ("project(swgpu VERSION " + swgpu.__version__ + ")") in cmake


def test_hits_as_columns_and_as_a_data_frame(demo_hits):
    cols = swgpu.hits_to_dict(demo_hits)
    assert cols["sseqid"] == [h.sseqid for h in demo_hits] and cols["score"] == [h.score for h in demo_hits]
    assert set(COLUMNS.split()) <= set(cols) and swgpu.hits_to_dict([]) == {}
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(swgpu.Error) as e:
            swgpu.hits_to_frame(demo_hits)
        assert e.value.exit_code == 2 and "pandas" in str(e.value)
        return
    frame = swgpu.hits_to_frame(demo_hits)
    assert list(frame["sseqid"]) == cols["sseqid"] and len(frame) == len(demo_hits)


def test_the_stubs_name_every_keyword_of_every_call():
    # Each public call's parameters, as the stub file (__init__.pyi) declares them, are those it takes: the keyword
    # settings of the alignment calls are _settings's, spelled out in the stubs rather than hidden behind **settings.
    import ast
    import inspect

    stub = ast.parse((pathlib.Path(swgpu.__file__).parent / "__init__.pyi").read_text())
    declared = {}
    for node in stub.body:
        if isinstance(node, ast.FunctionDef):
            declared[node.name] = node.args
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    declared[node.name] = item.args
    settings = list(inspect.signature(swgpu._settings).parameters)

    def taken(call):
        names = []
        for p in inspect.signature(call).parameters.values():
            if p.kind is inspect.Parameter.VAR_KEYWORD:
                names += [s for s in settings if s not in names]
            elif p.name != "self":
                names.append(p.name)
        return names

    checked = 0
    for name in swgpu.__all__:
        obj = getattr(swgpu, name)
        if name in ("Error", "Hit", "Sequence") or not callable(obj):
            continue
        call = obj.__init__ if inspect.isclass(obj) else obj
        assert name in declared, name + " has no stub"
        if inspect.isbuiltin(call):  # the module's own function (gpu_available): no Python signature to hold it to
            continue
        args = declared[name]
        stubbed = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs if a.arg != "self"]
        assert args.kwarg is None, name + "'s stub hides keywords behind **" + args.kwarg.arg
        assert sorted(stubbed) == sorted(taken(call)), name
        checked += 1
    assert checked >= 10


def test_align_pair_all_gives_search_for_one_pair_with_max_hsps():
    core = "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQAPILSRVGDGTQDNLSGAEKAVQVKVKALPDAQFEVVHSLAKWKRQTLGQHDFSAGEG"
    q = swgpu.Sequence("q", core)
    s = swgpu.Sequence("s1", "GGGG" + core[40:] + "PPPPPPPP" + core[:60] + "WWWW")
    hits = swgpu.align_pair_all(q, s, max_hsps=4, backend="cpu")
    assert len(hits) >= 2
    assert hits == swgpu.search([q], [s], max_hsps=4, backend="cpu")
    assert hits[0] == swgpu.align_pair(q, s, backend="cpu")
    assert swgpu.align_pair_all("AAAA", "CCCC", backend="cpu") == []


def test_zdrop_cuts_alignments_as_the_command_line(tmp_path):
    # A genome against a copy with its middle 2 kbp inverted: the two plus-strand blocks and the minus block, as
    # `swgpu align --zdrop` prints them; errors for a negative zdrop and for protein.
    import random
    rng = random.Random(17)
    genome = "".join(rng.choice("ACGT") for _ in range(12000))
    middle = genome[5000:7000][::-1].translate(str.maketrans("ACGT", "TGCA"))
    g, c = tmp_path / "g.fa", tmp_path / "c.fa"
    g.write_text(">genome\n%s\n" % genome)
    c.write_text(">copy\n%s\n" % (genome[:5000] + middle + genome[7000:]))
    blocks = swgpu.search(g, c, max_hsps=3, zdrop=200, backend="cpu")
    assert [as_columns(h) for h in blocks] == cli(g, c, "--max-hsps", 3, "--zdrop", 200)
    assert sorted(h.sstrand for h in blocks if h.length > 1500) == ["minus", "plus", "plus"]
    assert max(h.length for h in swgpu.search(g, c, backend="cpu")) > 11000
    for settings in ({"zdrop": -1}, {"zdrop": "400"}):
        with pytest.raises(swgpu.Error) as e:
            swgpu.search(g, c, **settings)
        assert e.value.exit_code == 2, settings
    with pytest.raises(swgpu.Error) as e:
        swgpu.search([("p", "MKTAYIAKQRQISFVKSHFSRQ")], [("s", "MKTAYIAKQRQISFVKSHFSRQ")], zdrop=10)
    assert e.value.exit_code == 2 and "zdrop" in str(e.value)
