"""swgpu: exact Smith-Waterman-Gotoh search and alignment, and summed-area tables, on GPUs and CPUs.

The calls give what the command line gives for the same input and settings (docs/python.md):

    import swgpu
    hits = swgpu.search("queries.fa", "db.fa", max_target_seqs=5)   # the hits `swgpu align` prints
    db = swgpu.Database("db.fa")                                     # read, encoded, backend started once
    more = db.search([("q1", "MKTAYIAKQR")])
    table = swgpu.sat(image)                                         # summed-area table of a NumPy array
    x = swgpu.triangular_solve(scipy_matrix, b)                      # sparse triangular solve (`swgpu levels`)
    u, history = swgpu.sor(f, g)                                     # SOR for the 2-D Poisson problem
    grid = swgpu.sweep3d(64)                                         # the 3-D wavefront sweep

Errors are swgpu.Error, whose exit_code is the command line's exit code (1 bad input, 2 bad settings, 3 device
failure, 4 out of memory, 5 output; swgpu.sor does not raise for a run that stops above its tolerance, the command
line's exit code 6: see its history["converged"]).
"""

import os as _os

from ._swgpu import Error, Hit, Sequence, gpu_available, read_sequences  # noqa: F401
from ._swgpu import __version__  # noqa: F401
from . import _swgpu

__all__ = ["Error", "Hit", "Sequence", "Database", "Client", "gpu_available", "hits_to_dict", "hits_to_frame", "read_sequences", "search", "align_pair", "align_pair_all", "sat", "ihist",
           "triangular_solve", "sor", "sweep3d"]


def _error(code, message):
    e = Error(message)
    e.exit_code = code
    return e


def _settings(matrix=None, gap_open=None, gap_extend=None, match=None, mismatch=None, max_target_seqs=500,
              evalue=10.0, evalues=True, strand="both", seqtype="auto", backend="auto", gpus=None, gpu_memory=0,
              threads=0, mode="auto", seg=False, dust=False, comp_based_stats=0, max_hsps=1, zdrop=None):
    def number(value, name, kind):
        if isinstance(value, bool) or not isinstance(value, kind):
            raise _error(2, "%s must be a number, not %r" % (name, value))
        return value

    for name, value in (("strand", strand), ("seqtype", seqtype), ("backend", backend), ("mode", mode)):
        if not isinstance(value, str):
            raise _error(2, "%s must be a str, not %r" % (name, value))
    for name, value in (("seg", seg), ("dust", dust)):
        if not isinstance(value, bool):
            raise _error(2, "%s must be True or False, not %r" % (name, value))
    if matrix is not None:
        matrix = _os.fspath(matrix) if isinstance(matrix, _os.PathLike) else matrix
    return _swgpu._settings(matrix, gap_open, gap_extend, match, mismatch,
                            number(max_target_seqs, "max_target_seqs", int), float(number(evalue, "evalue", (int, float))),
                            bool(evalues), strand, seqtype, backend, gpus, number(gpu_memory, "gpu_memory", int),
                            number(threads, "threads", int), mode, seg, dust,
                            number(comp_based_stats, "comp_based_stats", int), number(max_hsps, "max_hsps", int),
                            zdrop if zdrop is None else number(zdrop, "zdrop", int))


def hits_to_dict(hits):
    """The hits as columns: a dict of BLAST column name -> list of values, one per hit, in order (Hit.to_dict's names;
    a NaN E-value or bit score is None).

        >>> cols = swgpu.hits_to_dict(swgpu.search("q.fa", "db.fa"))
        >>> cols["sseqid"][:3], cols["evalue"][:3]
    """
    rows = [h.to_dict() for h in hits]
    if not rows:
        return {}
    return {name: [r[name] for r in rows] for name in rows[0]}


def hits_to_frame(hits):
    """The hits as a pandas.DataFrame, one row per hit and BLAST's column names (needs pandas: swgpu.Error otherwise)."""
    try:
        import pandas
    except ImportError:
        raise _error(2, "hits_to_frame needs pandas (Debian python3-pandas); hits_to_dict gives the columns without it") \
            from None
    return pandas.DataFrame(hits_to_dict(hits))


def _is_path(x):
    return isinstance(x, (str, bytes, _os.PathLike))


def _path(x):
    p = _os.fspath(x)
    return _os.fsdecode(p) if isinstance(p, bytes) else p


def _sequence(x, what):
    if isinstance(x, Sequence):
        return x
    if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], str) and isinstance(x[1], str):
        return Sequence(x[0], x[1])
    raise _error(1, "%s: a Sequence or a (name, residues) tuple of str, not %r" % (what, x))


def _refuse_residues_as_path(path, what):
    """A str that names no file but looks like residues was meant as a sequence: say how to give one."""
    import re

    if isinstance(path, str) and not _os.path.exists(path) and re.fullmatch(r"[A-Za-z*\-]+", path) and len(path) > 0:
        raise _error(1, "%s: %r is no file; to search residues give [(\"name\", %r)] or a Sequence"
                     % (what, path[:30] + ("..." if len(path) > 30 else ""), path[:30] + ("..." if len(path) > 30 else "")))


def _records(x, what):
    """A path (read with read_sequences), or a list of Sequence or (name, residues) tuples, as a list of Sequence."""
    if _is_path(x):
        _refuse_residues_as_path(_path(x), what)
        return read_sequences(_path(x))
    if isinstance(x, (Sequence, tuple)):
        return [_sequence(x, what)]
    try:
        items = list(x)
    except TypeError:
        raise _error(1, "%s: a path, or a list of Sequence or (name, residues) tuples, not %r" % (what, x)) from None
    return [_sequence(r, "%s[%d]" % (what, k)) for k, r in enumerate(items)]


def search(queries, database, *, matrix=None, gap_open=None, gap_extend=None, match=None, mismatch=None,
           max_target_seqs=500, evalue=10.0, strand="both", seqtype="auto", backend="auto", gpus=None, threads=0,
           **more):
    """Every query against every database sequence: the hits `swgpu align` prints, in its order.

    queries, database: a path (str or os.PathLike: FASTA/FASTQ, gzip, a region "genome.fa:chr1:1-500"; for the
    database also a `swgpu makedb` database), a list of Sequence, or a list of (name, residues) tuples.
    Settings (None: the default): matrix (a built-in name such as "BLOSUM62" or an NCBI matrix file; default BLOSUM62
    for protein, match/mismatch for DNA), gap_open, gap_extend (BLAST's convention; default the matrix's),
    match/mismatch (DNA without a matrix; 2/-3), max_target_seqs (hits kept per query), evalue (threshold),
    strand ("both", "plus", "minus"), seqtype ("auto", "protein", "dna"), backend ("auto", "cpu", "gpu"), gpus (how
    many GPUs; None: every visible one), threads (CPU threads; 0: one per hardware thread); also evalues (False: no
    statistics), gpu_memory (bytes per GPU; 0: what is free), mode ("auto", "search", "pairwise"), seg (True: mask
    the protein queries' low-complexity residues, as blastp -seg yes), dust (True: the same for DNA, as blastn -dust
    yes), comp_based_stats (1: composition-based statistics, as blastp -comp_based_stats 1), max_hsps (alignments
    per query, subject and strand: the best, then those sharing no aligned pair with it, as --max-hsps) and zdrop
    (DNA: each alignment cut into collinear blocks by minimap2's Z-drop rule, as --zdrop; None: not cut).

    Long calls run without the GIL; Ctrl-C stops them (KeyboardInterrupt), and calls running on other threads at that
    moment raise swgpu.Error with exit_code 130.

    Returns a list of Hit. Raises swgpu.Error (exit_code 1 bad input, 2 bad settings, 3 device failure, 4 memory).

        >>> hits = swgpu.search("data/demo_queries.fa", "data/demo_db.fa", max_target_seqs=5)
        >>> hits[0].sseqid, hits[0].evalue
    """
    settings = _settings(matrix, gap_open, gap_extend, match, mismatch, max_target_seqs, evalue, strand=strand,
                         seqtype=seqtype, backend=backend, gpus=gpus, threads=threads, **more)
    q = _records(queries, "queries")
    if _is_path(database):
        _refuse_residues_as_path(_path(database), "database")
        return _swgpu._Database(_path(database), settings).search(q)
    return _swgpu._search(q, _records(database, "database"), settings)


class Database:
    """A database kept in memory, encoded, with its backend (the GPUs) started, across searches.

    Database(database, **settings): database is a path (FASTA/FASTQ, a region, or a `swgpu makedb` database PREFIX or
    PREFIX.swdb), a list of Sequence or a list of (name, residues) tuples; the keyword settings are swgpu.search's.
    Each .search(queries) gives what swgpu.search gives with the same records and settings; searches from several
    threads run one after the other.

        >>> db = swgpu.Database("data/demo_db.fa", max_target_seqs=5)
        >>> len(db), db.residues
        >>> hits = db.search("data/demo_queries.fa")
    """

    def __init__(self, database, **settings):
        """Reads (or takes) the records, encodes them and starts the backend once."""
        s = _settings(**settings)
        if _is_path(database):
            _refuse_residues_as_path(_path(database), "database")
            self._db = _swgpu._Database(_path(database), s)
        else:
            self._db = _swgpu._Database(_records(database, "database"), s)

    def search(self, queries):
        """Every query (a path, a list of Sequence or of (name, residues) tuples) against the database: a list of Hit."""
        return self._db.search(_records(queries, "queries"))

    def __len__(self):
        """The number of records."""
        return len(self._db)

    @property
    def residues(self):
        """The number of residues of all records."""
        return self._db.residues

    def __repr__(self):
        """Records and residues."""
        return "Database(%d records, %d residues)" % (len(self), self.residues)


class Client:
    """A `swgpu serve` service (docs/serve.md), through Python's standard library (urllib).

    Client(url, token=None, timeout=600): url as "http://127.0.0.1:8080"; token the service's bearer token.
    """

    _SETTINGS = ("matrix", "gap_open", "gap_extend", "match", "mismatch", "max_target_seqs", "evalue", "evalues",
                 "strand", "seqtype", "seg", "dust", "comp_based_stats", "max_hsps", "zdrop")

    def __init__(self, url, token=None, timeout=600.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _call(self, method, path, body=None):
        import json
        import urllib.error
        import urllib.request

        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(self.url + path, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            text = e.read()
            try:
                err = json.loads(text)["error"]
                kind, message = err["kind"], err["message"]
            except (ValueError, KeyError, TypeError):
                kind, message = "http_%d" % e.code, text[:200].decode("utf-8", "replace")
            code = 2 if kind in ("bad_setting", "unknown_setting", "refused_setting", "unauthorized") else \
                1 if e.code in (400, 413) else 3
            err = _error(code, "%s: %d %s: %s" % (self.url, e.code, kind, message))
            err.status, err.kind = e.code, kind
            raise err from None
        except urllib.error.URLError as e:
            raise _error(3, "%s: no answer (%s)" % (self.url, e.reason)) from None

    def search(self, queries, **settings):
        """The queries (a path read here, a list of Sequence or of (name, residues) tuples) searched by the service:
        a list of Hit, as swgpu.search gives against the service's database with the same settings (those of
        swgpu.search that a request may set: matrix by built-in name, gap_open, gap_extend, match, mismatch,
        max_target_seqs, evalue, evalues, strand, seqtype, seg, dust, comp_based_stats, max_hsps, zdrop)."""
        import json

        for k in settings:
            if k not in self._SETTINGS:
                raise _error(2, "Client.search: %r is not a setting a request may give (%s)" %
                             (k, ", ".join(self._SETTINGS)))
        body = {k: v for k, v in settings.items() if v is not None}
        body["sequences"] = [{"id": r.name, "residues": r.residues} for r in _records(queries, "queries")]
        answer = self._call("POST", "/search", json.dumps(body).encode())
        hits = []
        for d in answer["hits"]:
            h = Hit.__new__(Hit)
            h.__setstate__(d)
            hits.append(h)
        return hits

    def health(self):
        """GET /health: the service's database, backend and queue, as a dict."""
        return self._call("GET", "/health")


def align_pair(query, subject, **settings):
    """The best local alignment of two sequences (both strands for DNA), long pairs included: a Hit.

    query, subject: a Sequence, a (name, residues) tuple, or a str of residues (named "query" and "subject").
    Keyword settings as swgpu.search's. A pair with no positive-scoring alignment gives a Hit of score 0 with empty
    coordinates; E-values are computed as for a database of this one subject.

        >>> h = swgpu.align_pair("HEAGAWGHEE", "PAWHEAE", matrix="BLOSUM50", gap_open=13, gap_extend=2)
        >>> h.score, h.cigar
    """
    return _swgpu._align_pair(_pair_member(query, "query"), _pair_member(subject, "subject"), _settings(**settings))


def _pair_member(x, name):
    return Sequence(name, x) if isinstance(x, str) else _sequence(x, name)


def align_pair_all(query, subject, **settings):
    """Every alignment of two sequences that max_hsps asks for (per strand for DNA): a list of Hit, as
    swgpu.search([query], [subject], **settings) gives them. Where none passes evalue, the best alignment all the
    same (align_pair's); an empty list for a pair with no positive-scoring alignment.

        >>> hits = swgpu.align_pair_all(q, s, max_hsps=3)
    """
    return _swgpu._align_pair_all(_pair_member(query, "query"), _pair_member(subject, "subject"),
                                  _settings(**settings))


def sat(image, *, dtype=None, backend="auto"):
    """The summed-area table of an image of shape (H, W) or (H, W, C), as `swgpu sat` computes it.

    S[i, j] is the sum over rows 0..i and columns 0..j, per channel: uint64 for unsigned inputs, int64 for signed
    ones, float64 for floating ones; exact for integers and the same on every backend. image: anything
    numpy.asarray takes, of unsigned or signed integers (8 to 64 bits), float32 or float64; dtype: converts the image
    to this element type first (None: as it is). Fortran-order, non-contiguous or byte-swapped arrays are copied
    once into C order. backend: "auto", "cpu" or "gpu". Returns a new numpy.ndarray that owns its memory.

        >>> a = numpy.arange(12, dtype=numpy.uint8).reshape(3, 4)
        >>> swgpu.sat(a)[-1, -1]     # 66
    """
    import numpy

    if not isinstance(backend, str):
        raise _error(2, "backend must be a str, not %r" % (backend,))
    try:
        a = numpy.asarray(image, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise _error(2, "sat: not an array of numbers: %s" % e) from None
    if a.dtype.kind not in "uif":
        raise _error(2, "sat: images of unsigned or signed integers of 8 to 64 bits, float32 or float64, not %s"
                     % a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.c_contiguous:
        a = numpy.ascontiguousarray(a)
    return _swgpu._sat(a, backend)


def ihist(image, bins=None, *, edges=None, backend="auto"):
    """The integral histogram of a one-channel image of shape (H, W), as `swgpu ihist` computes it.

    Returns a uint32 numpy.ndarray of shape (H, W, B): [i, j, b] counts the pixels of bin b in rows 0..i and columns
    0..j. bins: B (1..65535); without edges, 8-bit values v go to bin v*B//256, 16-bit ones to v*B//65536, other types
    to B equal bins over [min, max]. edges: B + 1 increasing values (bins may then be left out): bin b holds
    edges[b] <= v < edges[b+1], the last bin also v == edges[B] (numpy.histogram's rule); values outside are in no bin.
    backend: "auto", "cpu" or "gpu". The same on every backend.

        >>> swgpu.ihist(numpy.array([[0, 255]], dtype=numpy.uint8), 2)[0, 1]    # [1, 1]
    """
    import numpy

    if not isinstance(backend, str):
        raise _error(2, "backend must be a str, not %r" % (backend,))
    try:
        a = numpy.asarray(image)
    except (TypeError, ValueError) as e:
        raise _error(2, "ihist: not an array of numbers: %s" % e) from None
    if a.dtype.kind not in "uif":
        raise _error(2, "ihist: images of unsigned or signed integers of 8 to 64 bits, float32 or float64, not %s"
                     % a.dtype)
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    if not a.flags.c_contiguous:
        a = numpy.ascontiguousarray(a)
    e = [] if edges is None else [float(x) for x in edges]
    if bins is None:
        if not e:
            raise _error(2, "ihist: give bins, or edges")
        bins = len(e) - 1
    try:
        b = int(bins)
    except (TypeError, ValueError):
        raise _error(2, "ihist: bins must be an integer, not %r" % (bins,)) from None
    return _swgpu._ihist(a, b, e, backend)


def _backend(backend):
    if not isinstance(backend, str):
        raise _error(2, "backend must be a str, not %r" % (backend,))
    return backend


def _csr(matrix):
    """(indptr, indices, data, rows, cols) of a scipy.sparse matrix, a dense 2-D array or a CSR tuple."""
    import numpy

    if isinstance(matrix, tuple):
        if len(matrix) != 4:
            raise _error(1, "triangular_solve: a CSR tuple is (indptr, indices, data, shape)")
        indptr, indices, data, shape = matrix
        try:
            rows, cols = (int(x) for x in shape)
        except (TypeError, ValueError):
            raise _error(1, "triangular_solve: the CSR tuple's shape must be (rows, cols)") from None
    elif hasattr(matrix, "tocsr") and hasattr(matrix, "nnz"):  # any scipy.sparse matrix or array
        m = matrix.tocsr()
        indptr, indices, data = m.indptr, m.indices, m.data
        rows, cols = m.shape
    else:
        try:
            a = numpy.asarray(matrix)
        except (TypeError, ValueError) as e:
            raise _error(1, "triangular_solve: not a matrix: %s" % e) from None
        if a.ndim != 2:
            raise _error(1, "triangular_solve: a matrix has two dimensions, not %d" % a.ndim)
        rows, cols = a.shape
        r, c = numpy.nonzero(a)
        data = a[r, c]
        indices = c
        indptr = numpy.concatenate(([0], numpy.cumsum(numpy.bincount(r, minlength=rows))))
    _refuse_complex(data, "triangular_solve: the matrix")
    try:
        indptr = numpy.ascontiguousarray(indptr, dtype=numpy.int64)
        indices = numpy.ascontiguousarray(indices, dtype=numpy.int64)
        data = numpy.ascontiguousarray(data, dtype=numpy.float64)
    except (TypeError, ValueError) as e:
        raise _error(1, "triangular_solve: the matrix's arrays are not numbers: %s" % e) from None
    if indptr.ndim != 1 or indices.ndim != 1 or data.ndim != 1:
        raise _error(1, "triangular_solve: indptr, indices and data must be vectors")
    return indptr, indices, data, int(rows), int(cols)


def _refuse_complex(x, what):
    """Complex values would lose their imaginary part in the conversion to float64 (NumPy only warns): refused, as
    the command line refuses complex files (exit code 1)."""
    import numpy

    if numpy.iscomplexobj(x):
        raise _error(1, "%s holds complex values; give real numbers (take .real or abs() first)" % what)


def triangular_solve(matrix, b, *, lower=True, backend="auto"):
    """x with T x = b, T the lower (lower=True) or upper triangle of matrix, as `swgpu levels` solves it.

    matrix: any scipy.sparse matrix or array (converted to CSR), a dense 2-D array, or a CSR tuple
    (indptr, indices, data, shape); square. Entries outside the triangle are ignored, duplicates summed. b: a vector
    of the matrix's row count (converted to float64). Each row is x[i] = (b[i] - sum_j T[i][j] x[j]) / T[i][i],
    summed in ascending column order: the same bits on every backend ("auto", "cpu", "gpu"). Returns a float64
    numpy.ndarray of shape (n,).

    Raises swgpu.Error with exit_code 1 (bad input) for a matrix that is not square or is empty, a missing or zero
    diagonal entry, NaN or infinite values, or b of the wrong length; 2 for a bad backend.

        >>> T = scipy.sparse.random(1000, 1000, density=0.01, format="csr") + scipy.sparse.eye(1000)
        >>> x = swgpu.triangular_solve(T, numpy.ones(1000))    # scipy.sparse.linalg.spsolve_triangular(T, b)
    """
    import numpy

    backend = _backend(backend)
    indptr, indices, data, rows, cols = _csr(matrix)
    _refuse_complex(b, "triangular_solve: b")
    try:
        v = numpy.ascontiguousarray(b, dtype=numpy.float64)
    except (TypeError, ValueError) as e:
        raise _error(1, "triangular_solve: b is not a vector of numbers: %s" % e) from None
    return _swgpu._triangular_solve(indptr, indices, data, rows, cols, v, bool(lower), backend)


def sor(f, g, *, method="lex", omega=None, tol=1e-8, max_sweeps=None, layers=None, stagnation=1000, backend="auto"):
    """SOR for -lap u = f on an N x N grid (spacing 1/(N-1)), u = g on the edges, as `swgpu sor` solves it.

    f, g: (N, N) arrays (converted to float64), N >= 3; only g's edges are used. method: "lex" (lexicographic SOR),
    "redblack", "ssor" or "mlssor" (K-layer SSOR, K = layers, default 3). omega: the relaxation factor in (0, 2)
    (None: the optimal 2 / (1 + sin(pi h))). The run stops when the relative residual ||b - A u|| / ||b|| is at most
    tol (converged), after `stagnation` sweeps without a 0.1 % fall of the smallest residual (0: never), or after
    max_sweeps (None: 10000). backend: "auto", "cpu" or "gpu" (the same bits).

    Returns (u, history): u the (N, N) float64 solution, boundary included; history a dict with the NumPy arrays
    "sweep" (int64, sweeps over the grid done: 2 per ssor iteration, 2K per mlssor one), "iteration" (int64),
    "residual" and "seconds" (one entry per iteration), and "converged" (bool), "reason" ("converged",
    "max_sweeps" or "stagnated") and "omega" (the factor used). A run that stops above tol is not an error here
    (the command line exits 6 for it, still writing U): check history["converged"].

    Raises swgpu.Error: exit_code 1 for arrays that are not square, of different shapes, smaller than 3 x 3, or hold
    NaN or infinities; 2 for bad settings.

        >>> u, h = swgpu.sor(f, g, tol=1e-10)
        >>> h["converged"], h["sweep"][-1], h["residual"][-1]
    """
    import numpy

    backend = _backend(backend)
    if not isinstance(method, str):
        raise _error(2, "method must be a str, not %r" % (method,))

    def integer(value, name, low, default):
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or not low <= value <= 2**31 - 1:
            raise _error(2, "%s must be an integer from %d to 2^31 - 1, not %r" % (name, low, value))
        return int(value)

    def number(value, name):
        if isinstance(value, bool) or not isinstance(value, (int, float, numpy.integer, numpy.floating)):
            raise _error(2, "%s must be a number, not %r" % (name, value))
        return float(value)

    if omega is None:
        w = 0.0
    else:
        w = number(omega, "omega")
        if not 0 < w < 2:
            raise _error(2, "omega must lie in (0, 2), not %r" % (omega,))
    _refuse_complex(f, "sor: f")
    _refuse_complex(g, "sor: g")
    try:
        fa = numpy.ascontiguousarray(f, dtype=numpy.float64)
        ga = numpy.ascontiguousarray(g, dtype=numpy.float64)
    except (TypeError, ValueError) as e:
        raise _error(1, "sor: f and g must be arrays of numbers: %s" % e) from None
    return _swgpu._sor(fa, ga, method, w, number(tol, "tol"), integer(max_sweeps, "max_sweeps", 1, 10000),
                       integer(layers, "layers", 1, 3), integer(stagnation, "stagnation", 0, 1000), backend)


def sweep3d(n, *, loops=1, precision="double", c=1.0, backend="auto"):
    """The fmod 3-D wavefront sweep of `swgpu sweep3d`: an (n, n, n) numpy.ndarray, C order [i, j, k].

    A[i, j, k] starts as ((i + 2j + 3k) mod 10) / 10; swept from (0, 0, 0), each point does `loops` times
    r = fmod(((r + A[i-1, j, k]) + A[i, j-1, k]) + A[i, j, k-1], c) with its neighbours' final values (0 outside the
    grid). precision: "double" (float64) or "single" (float32). The same bits on every backend ("auto", "cpu", "gpu").
    Raises swgpu.Error (exit_code 2) for n outside 1..4096, loops < 1, c not positive, or another precision.

        >>> a = swgpu.sweep3d(32, loops=2)
        >>> a.shape, a.dtype       # (32, 32, 32), float64
    """
    import numpy

    backend = _backend(backend)
    for name, value in (("n", n), ("loops", loops)):
        if isinstance(value, bool) or not isinstance(value, (int, numpy.integer)) or not -2**62 < value < 2**62:
            raise _error(2, "sweep3d: %s must be an integer, not %r" % (name, value))
    if not -2**31 <= loops < 2**31:
        raise _error(2, "sweep3d: loops must be at least 1 and below 2^31, not %r" % (loops,))
    if isinstance(c, bool) or not isinstance(c, (int, float, numpy.integer, numpy.floating)):
        raise _error(2, "sweep3d: c must be a number, not %r" % (c,))
    if not isinstance(precision, str):
        raise _error(2, "sweep3d: precision must be \"single\" or \"double\", not %r" % (precision,))
    return _swgpu._sweep3d(int(n), int(loops), float(c), precision, backend)
