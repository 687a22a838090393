# Type stubs of the package swgpu (app/python/swgpu/__init__.py and its compiled module _swgpu); docs/python.md.
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence as _Seq, Tuple, Union

import numpy
import numpy.typing

_Path = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]
_Record = Union["Sequence", Tuple[str, str]]
_Records = Union[_Path, _Record, Iterable[_Record]]
_Backend = str  # "auto", "cpu" or "gpu"

__all__: List[str]
__version__: str


class Error(Exception):
    """An error of swgpu: str(e) is the message, e.exit_code the command line's exit code."""
    exit_code: Optional[int]


class Sequence:
    """One record of a FASTA/FASTQ file."""
    name: str
    residues: str
    def __init__(self, name: str = ..., residues: str = ...) -> None: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...


class Hit:
    """One hit, with the values of `swgpu align`'s BLAST columns."""
    @property
    def qseqid(self) -> str: ...
    @property
    def sseqid(self) -> str: ...
    @property
    def pident(self) -> float: ...
    @property
    def length(self) -> int: ...
    @property
    def mismatch(self) -> int: ...
    @property
    def gapopen(self) -> int: ...
    @property
    def qstart(self) -> int: ...
    @property
    def qend(self) -> int: ...
    @property
    def sstart(self) -> int: ...
    @property
    def send(self) -> int: ...
    @property
    def evalue(self) -> float: ...
    @property
    def bitscore(self) -> float: ...
    @property
    def score(self) -> int: ...
    @property
    def cigar(self) -> str: ...
    @property
    def qlen(self) -> int: ...
    @property
    def slen(self) -> int: ...
    @property
    def sstrand(self) -> str: ...
    @property
    def nident(self) -> int: ...
    @property
    def positive(self) -> int: ...
    @property
    def gaps(self) -> int: ...
    @property
    def qseq(self) -> str: ...
    @property
    def sseq(self) -> str: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def __eq__(self, other: object) -> bool: ...


def gpu_available() -> bool:
    """Whether backend="gpu" can run here: the package was built with the GPU backend and a GPU is usable."""
    ...


def hits_to_dict(hits: Iterable[Hit]) -> Dict[str, List[Any]]:
    """The hits as columns: BLAST column name -> list of values, one per hit, in order."""
    ...


def hits_to_frame(hits: Iterable[Hit]) -> Any:
    """The hits as a pandas.DataFrame (needs pandas)."""
    ...


def read_sequences(path: str) -> List[Sequence]:
    """Every record of a FASTA/FASTQ file or of a region of an indexed FASTA."""
    ...


def search(queries: _Records, database: _Records, *, matrix: Optional[Union[str, "os.PathLike[str]"]] = ...,
           gap_open: Optional[int] = ..., gap_extend: Optional[int] = ..., match: Optional[int] = ...,
           mismatch: Optional[int] = ..., max_target_seqs: int = ..., evalue: float = ..., strand: str = ...,
           seqtype: str = ..., backend: _Backend = ..., gpus: Optional[int] = ..., threads: int = ...,
           evalues: bool = ..., gpu_memory: int = ..., mode: str = ..., seg: bool = ..., dust: bool = ...,
           comp_based_stats: int = ..., max_hsps: int = ...,
           zdrop: Optional[int] = ...) -> List[Hit]:
    """Every query against every database sequence: the hits `swgpu align` prints, in its order."""
    ...


class Database:
    """A database kept in memory, encoded, with its backend started, across searches."""
    def __init__(self, database: _Records, *, matrix: Optional[Union[str, "os.PathLike[str]"]] = ...,
                 gap_open: Optional[int] = ..., gap_extend: Optional[int] = ..., match: Optional[int] = ...,
                 mismatch: Optional[int] = ..., max_target_seqs: int = ..., evalue: float = ...,
                 evalues: bool = ..., strand: str = ..., seqtype: str = ..., backend: _Backend = ...,
                 gpus: Optional[int] = ..., gpu_memory: int = ..., threads: int = ..., mode: str = ...,
                 seg: bool = ..., dust: bool = ..., comp_based_stats: int = ..., max_hsps: int = ...,
           zdrop: Optional[int] = ...) -> None: ...
    def search(self, queries: _Records) -> List[Hit]: ...
    def __len__(self) -> int: ...
    @property
    def residues(self) -> int: ...


class Client:
    """A `swgpu serve` service (docs/serve.md), through urllib."""
    url: str
    token: Optional[str]
    timeout: float
    def __init__(self, url: str, token: Optional[str] = ..., timeout: float = ...) -> None: ...
    def search(self, queries: _Records, *, matrix: Optional[str] = ..., gap_open: Optional[int] = ...,
               gap_extend: Optional[int] = ..., match: Optional[int] = ..., mismatch: Optional[int] = ...,
               max_target_seqs: int = ..., evalue: float = ..., evalues: bool = ..., strand: str = ...,
               seqtype: str = ..., seg: bool = ..., dust: bool = ..., comp_based_stats: int = ...,
               max_hsps: int = ..., zdrop: Optional[int] = ...) -> List[Hit]: ...
    def health(self) -> Dict[str, Any]: ...


def align_pair(query: Union[_Record, str], subject: Union[_Record, str], *,
               matrix: Optional[Union[str, "os.PathLike[str]"]] = ...,
               gap_open: Optional[int] = ..., gap_extend: Optional[int] = ..., match: Optional[int] = ...,
               mismatch: Optional[int] = ..., max_target_seqs: int = ..., evalue: float = ..., evalues: bool = ...,
               strand: str = ..., seqtype: str = ..., backend: _Backend = ..., gpus: Optional[int] = ...,
               gpu_memory: int = ..., threads: int = ..., mode: str = ..., seg: bool = ..., dust: bool = ...,
               comp_based_stats: int = ..., max_hsps: int = ...,
           zdrop: Optional[int] = ...) -> Hit:
    """The best local alignment of two sequences (both strands for DNA)."""
    ...


def align_pair_all(query: Union[_Record, str], subject: Union[_Record, str], *,
                   matrix: Optional[Union[str, "os.PathLike[str]"]] = ...,
                   gap_open: Optional[int] = ..., gap_extend: Optional[int] = ..., match: Optional[int] = ...,
                   mismatch: Optional[int] = ..., max_target_seqs: int = ..., evalue: float = ..., evalues: bool = ...,
                   strand: str = ..., seqtype: str = ..., backend: _Backend = ..., gpus: Optional[int] = ...,
                   gpu_memory: int = ..., threads: int = ..., mode: str = ..., seg: bool = ..., dust: bool = ...,
                   comp_based_stats: int = ..., max_hsps: int = ...,
           zdrop: Optional[int] = ...) -> List[Hit]:
    """Every alignment of two sequences that max_hsps asks for, as search([query], [subject]) gives them."""
    ...


def sat(image: numpy.typing.ArrayLike, *, dtype: Optional[numpy.typing.DTypeLike] = ...,
        backend: _Backend = ...) -> numpy.ndarray:
    """The summed-area table of an image of shape (H, W) or (H, W, C): uint64, int64 or float64."""
    ...


def ihist(image: numpy.typing.ArrayLike, bins: Optional[int] = ..., *, edges: Optional[_Seq[float]] = ...,
          backend: _Backend = ...) -> numpy.ndarray:
    """The integral histogram (uint32, shape (H, W, B)) of a one-channel image of shape (H, W)."""
    ...


# A scipy.sparse matrix or array, a dense 2-D array, or a CSR tuple (indptr, indices, data, (rows, cols)).
_Matrix = Union[Any, numpy.typing.ArrayLike,
                Tuple[numpy.typing.ArrayLike, numpy.typing.ArrayLike, numpy.typing.ArrayLike, Tuple[int, int]]]


def triangular_solve(matrix: _Matrix, b: numpy.typing.ArrayLike, *, lower: bool = ...,
                     backend: _Backend = ...) -> numpy.ndarray:
    """x (float64, shape (n,)) with T x = b, T the lower or upper triangle of matrix (`swgpu levels`)."""
    ...


def sor(f: numpy.typing.ArrayLike, g: numpy.typing.ArrayLike, *, method: str = ..., omega: Optional[float] = ...,
        tol: float = ..., max_sweeps: Optional[int] = ..., layers: Optional[int] = ..., stagnation: int = ...,
        backend: _Backend = ...) -> Tuple[numpy.ndarray, Dict[str, Any]]:
    """SOR for the 2-D Poisson problem (`swgpu sor`): (u, history); history holds the NumPy arrays "sweep",
    "residual" and "seconds", and "converged" (bool), "reason" (str) and "omega" (float)."""
    ...


def sweep3d(n: int, *, loops: int = ..., precision: str = ..., c: float = ...,
            backend: _Backend = ...) -> numpy.ndarray:
    """The fmod 3-D wavefront sweep (`swgpu sweep3d`): an (n, n, n) float64 (or float32) array."""
    ...
