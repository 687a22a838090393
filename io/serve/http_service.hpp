// `swgpu serve`'s service once the face has checked its command line (docs/serve.md): the database read whole, an
// engine per distinct settings, the requests batched (core/align/search/batcher.hpp) and answered over HTTP
// (http_server.hpp) until a signal stops it. The GPUs come from the face, which makes them (io names no GPU).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/align/search/batcher.hpp"
#include "core/align/search/session.hpp"
#include "io/serve/http_server.hpp"

namespace swgpu::io {

struct service_setup {
    std::string db;           // the database: FASTA/FASTQ or a .swdb
    std::string version;      // swgpu's, for /health
    serve_options serve;      // address, limits, token, timeouts (log and on_failure are set here)
    request_settings defaults;
    search_batcher::options batching;
    int threads = 0;          // CPU threads of each engine (0: one per hardware thread)
    bool quiet = false;       // no line on stderr saying where it serves
    // The GPUs of a new engine, whose printed hits are aligned (`alignments`) or not; empty: the CPU. After a GPU
    // failed, the engines are made on the CPU.
    std::function<std::unique_ptr<search_devices>(bool alignments)> devices;
    int gpus = 0;             // the GPUs, as /health counts them
};

// Refuses a database whose letters and an encoded copy for each of the settings kept (serve_options::max_engines)
// would not fit the memory (before it is read: a plain file's size bounds its residues), reads it, makes the
// default settings' engine, binds the address (said on stderr unless quiet) and serves until one of `signals` stops
// it; then the batches queued are searched and answered.
void run_service(service_setup setup, stop_signals& signals);

}  // namespace swgpu::io
