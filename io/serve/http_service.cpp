#include "io/serve/http_service.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>

#include "core/align/sequence.hpp"
#include "io/align/database_file.hpp"
#include "io/align/sequence_reader.hpp"
#include "io/memory.hpp"

namespace swgpu::io {

void run_service(service_setup setup, stop_signals& signals) {
    serve_options& o = setup.serve;
    if (const auto bytes = plain_file_size(parse_source(database_path(setup.db)).path))
        check_memory(double(*bytes) * double(1 + std::max<std::size_t>(1, o.max_engines)),
                     "serve holds the database as read and an encoded copy for each of --max-settings",
                     "serve a smaller database, or lower --max-settings");
    auto db = std::make_shared<const sequence_set>(read_all_records(setup.db));
    const bool gpu = static_cast<bool>(setup.devices);
    service_facts facts{setup.db, setup.version, db->size(), db->total_residues(), classify(*db), gpu ? "gpu" : "cpu",
                        setup.gpus};
    // An engine per distinct settings: the scoring, a session on the CPU or the GPUs (the CPU after a GPU failed),
    // the database encoded for it.
    auto on_gpu = std::make_shared<std::atomic<bool>>(gpu);
    o.on_failure = [on_gpu] { return on_gpu->exchange(false) ? std::string("cpu") : std::string(); };
    engine_maker make = [db, on_gpu, devices = setup.devices, threads = setup.threads](
                            const request_settings& r, seq_type t, bool alignments, bool placements) {
        engine_plan p = plan_engine(r, t, alignments, placements);
        if (on_gpu->load()) p.search.session.devices = devices(alignments);
        p.search.session.threads = threads;
        return std::make_shared<resident_search>(make_scoring(p.scoring), std::move(p.search), *db);
    };
    o.log = [](const std::string& line) { std::cerr << "swgpu: serve: " << line << std::endl; };
    search_batcher batcher(setup.batching);
    const std::string host = o.host;
    http_server server(std::move(o), setup.defaults, facts, make, batcher);
    server.prepare();  // the default settings checked, their engine ready
    const int port = server.bind();
    if (!setup.quiet)
        std::cerr << "swgpu: serving " << setup.db << " (" << facts.sequences << " sequences, " << facts.residues
                  << " residues, " << facts.backend << ") on http://" << host << ":" << port << std::endl;
    signals.serve(server);
    batcher.stop();
}

}  // namespace swgpu::io
