"""swgpu.Client against a `swgpu serve` process: the same Hit objects as swgpu.search, refusals as swgpu.Error (run
by CTest as python_module; skipped where the program was built without the service)."""

import os
import pathlib
import re
import signal
import subprocess

import pytest

import swgpu

SOURCE = pathlib.Path(os.environ.get("SWGPU_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BINARY = pathlib.Path(os.environ.get("SWGPU_BINARY", SOURCE / "build" / "app" / "swgpu"))
QUERIES = SOURCE / "data" / "demo_queries.fa"
DB = SOURCE / "data" / "demo_db.fa"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    token = tmp_path_factory.mktemp("serve") / "token"
    token.write_text("tok-123\n")
    proc = subprocess.Popen([str(BINARY), "serve", str(DB), "--listen", "127.0.0.1:0", "--backend", "cpu",
                             "--token-file", str(token)], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    m = re.search(r"on http://127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.wait()
        if "without cpp-httplib" in line:
            pytest.skip("swgpu built without the service")
        raise AssertionError(line)
    yield "http://127.0.0.1:%s" % m.group(1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


def test_client_gives_the_hits_of_search(service):
    client = swgpu.Client(service, token="tok-123")
    assert client.search(str(QUERIES)) == swgpu.search(str(QUERIES), str(DB), backend="cpu")
    settings = dict(max_target_seqs=3, evalue=1e-5, matrix="BLOSUM45", seg=True, max_hsps=2)
    assert client.search(str(QUERIES), **settings) == swgpu.search(str(QUERIES), str(DB), backend="cpu", **settings)
    pairs = [("a", "MKVLAAGIVGLLLAQHWERTYPLKV"), ("b", "WWWWWWWWWW")]
    assert client.search(pairs, evalues=False) == swgpu.search(pairs, str(DB), backend="cpu", evalues=False)
    health = client.health()
    assert health["sequences"] == len(swgpu.read_sequences(str(DB))) and health["backend"] == "cpu"


def test_client_refusals(service):
    with pytest.raises(swgpu.Error) as e:
        swgpu.Client(service).search(str(QUERIES))
    assert e.value.status == 401 and e.value.exit_code == 2
    client = swgpu.Client(service, token="tok-123")
    with pytest.raises(swgpu.Error) as e:
        client.search(str(QUERIES), matrix="/etc/passwd")
    assert e.value.status == 400 and e.value.exit_code == 2
    with pytest.raises(swgpu.Error) as e:
        client.search(str(QUERIES), colour="red")
    assert e.value.exit_code == 2
    with pytest.raises(swgpu.Error) as e:
        client.search([("dna", "ACGTACGTACGTACGTACGTACGT")])
    assert e.value.status == 400 and e.value.exit_code == 1
    with pytest.raises(swgpu.Error) as e:
        swgpu.Client("http://127.0.0.1:1", timeout=5).search(str(QUERIES))
    assert e.value.exit_code == 3
