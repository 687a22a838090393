// The search service over HTTP/1.1 (`swgpu serve`, docs/serve.md), on cpp-httplib: a thin adapter between requests
// and core's search_batcher (core/align/search/batcher.hpp), which batches and searches them.
//
//   POST /search   FASTA (settings in the query string) or JSON ({"sequences": [{"id", "residues"}] or "fasta", and
//                  settings named as `swgpu align`'s options: evalue, max_target_seqs, outfmt, matrix, ...) ->
//                  {"hits": [...]} with the library's hit fields, or with Accept: text/tab-separated-values the bytes
//                  `swgpu align` prints in the request's outfmt.
//   GET /health    the database, the backend, the queue (JSON).
//   GET /metrics   requests by status, latencies, batches, the queue (Prometheus text format).
// Every refusal is {"error": {"kind": ..., "message": ...}} with its status: 400 bad FASTA, JSON or setting, 401 no or
// a wrong bearer token, 404 unknown path, 405 wrong method, 413 a body, query count or query too large, 503 a full
// queue, a search that failed (logged) or ran past the timeout, or the service stopping.
//
// Connections: one thread each, at most max_connections (beyond: 503 at once, then closed); a connection waits at
// most idle_timeout for a request and reading a request takes at most read_timeout (slow clients are cut off). No
// request names a file the server reads or writes: matrix files, -o, --dotplot, --batch and databases are refused.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/align/search/batcher.hpp"
#include "core/align/sequence.hpp"
#include "io/align/matrix_file.hpp"

namespace swgpu::io {

// What a request may set: `swgpu align`'s options (named as the library's search_settings where it has them). The
// server's command line gives the defaults.
struct request_settings {
    std::string matrix;  // a built-in name in requests (the server's default may be a file)
    std::optional<int> gap_open, gap_extend, match, mismatch, zdrop;
    std::string strand = "both";  // both, plus, minus (DNA)
    std::string seqtype = "auto";  // auto, protein, dna
    std::int64_t max_target_seqs = 500;
    double evalue = 10;
    bool evalues = true;
    bool seg = false, dust = false;
    int comp_based_stats = 0, max_hsps = 1;
    std::string outfmt = "6";
    bool eqx = false;
};

struct serve_options {
    std::string host = "127.0.0.1";
    int port = 8080;
    std::string token;            // bearer token; empty: none asked
    std::size_t max_body = 16u << 20;   // bytes
    std::size_t max_queries = 1000;     // per request
    std::size_t max_residues = 100000;  // per query
    std::size_t max_connections = 4096;
    std::size_t max_engines = 4;        // distinct search settings kept composed at once
    std::chrono::milliseconds timeout{60000};  // a search's answer
    std::chrono::milliseconds idle_timeout{5000}, read_timeout{10000};
    std::function<void(const std::string&)> log;  // one line per failure (stderr)
    // After a search failed with a runtime failure (a device's; not memory, not a refused request): the backend to
    // say from now on ("cpu" when the face makes engines on the CPU from then on), empty: unchanged. The engines kept
    // are dropped after any failure.
    std::function<std::string()> on_failure;
};

// What /health says of the service.
struct service_facts {
    std::string database;  // as given
    std::string version;   // swgpu's, for headers
    std::uint64_t sequences = 0, residues = 0;
    seq_type type = seq_type::protein;
    std::string backend;  // "cpu", "gpu"
    int gpus = 0;
};

// The scoring and the search's options that a request's settings give for queries of type `t` (checked against it:
// match/mismatch, dust and zdrop are DNA's, seg and composition-based statistics protein's); the face adds the
// devices and threads.
struct engine_plan {
    scoring_request scoring;
    resident_search::options search;
};
engine_plan plan_engine(const request_settings& r, seq_type t, bool alignments, bool placements);

// The engine for a request's settings and its queries' type (made by the face: the scoring, the session on the CPU
// or the GPUs, the database encoded). Throws swgpu::error (a bad setting: bad_command_line).
using engine_maker = std::function<std::shared_ptr<resident_search>(const request_settings&, seq_type, bool alignments,
                                                                    bool placements)>;

class http_server {
public:
    http_server(serve_options opt, request_settings defaults, service_facts facts, engine_maker make,
                search_batcher& batcher);
    ~http_server();
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    // Makes the engine of the default settings (a bad default fails here, before any request).
    void prepare();
    // Binds host:port (port 0: any free one); throws runtime_failure when it cannot.
    int bind();
    // Serves until stop(): then answers the requests in flight and returns.
    void listen();
    // Stops accepting; safe from another thread (a signal's).
    void stop();

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

// SIGTERM and SIGINT for a server: made before any other thread of the process starts (it blocks them in every thread
// started after it, and waits for them on a thread of its own). A signal before serve() exits 0 at once; during it,
// stops the server (the requests in flight are answered), after which serve() returns.
class stop_signals {
public:
    explicit stop_signals(std::function<void(int)> on_stop = {});
    ~stop_signals();
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;
    void serve(http_server& server);  // listen() until a signal

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

// --listen HOST:PORT ([V6]:PORT); a usage error otherwise.
std::pair<std::string, int> parse_listen(const std::string& text);
// The bearer token: the first line of `path`, trailing blanks dropped; a bad_input error when missing or empty.
std::string read_token_file(const std::string& path);

// Reads FASTA or FASTQ text (a request's body) with the file reader's rules; messages name it `name`.
sequence_set read_sequences_text(const std::string& text, const std::string& name);

}  // namespace swgpu::io
