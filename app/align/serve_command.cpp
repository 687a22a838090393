#include "app/align/serve_command.hpp"

#include <iostream>
#include <sstream>

#include "app/align/align_run.hpp"
#include "gpu/align/gpu_search.hpp"
#include "gpu/gpu.hpp"
#include "io/memory.hpp"
#include "io/output_file.hpp"
#include "io/serve/http_client.hpp"
#include "io/serve/http_server.hpp"
#include "io/serve/http_service.hpp"

namespace swgpu::app {

struct serve_command::settings {
    std::string db, listen = "127.0.0.1:8080", token_file, backend = "auto", gpu_mem;
    io::request_settings request;
    io::serve_options serve;
    int gap_open = -1, gap_extend = -1, match = 2, mismatch = -3, zdrop = -1, gpus = 0, batch_wait_ms = 3;
    std::size_t max_batch = 1024, max_queue = 1024, timeout_s = 60, client_timeout_s = 5;
    unsigned threads = 0;
    bool quiet = false;
};

serve_command::serve_command(CLI::App& app)
    : command(app, "serve", "Keep a database resident and answer searches over HTTP (docs/serve.md)"),
      s_(std::make_shared<settings>()) {
    settings& s = *s_;
    add_input("DB", s.db, "the database", "Database: FASTA/FASTQ or a database made by swgpu makedb (PREFIX.swdb)")
        ->required();
    sub_->add_option("--listen", s.listen, "HOST:PORT to listen on (port 0: any free one, printed)")->capture_default_str();
    sub_->add_option("--token-file", s.token_file, "A file holding a bearer token every request must send");
    sub_->add_option("--batch-wait", s.batch_wait_ms, "Milliseconds a request waits for others to join its batch")
        ->capture_default_str();
    sub_->add_option("--max-batch", s.max_batch, "Queries per batch")->capture_default_str();
    sub_->add_option("--max-queue", s.max_queue, "Requests waiting; more are answered 503")->capture_default_str();
    sub_->add_option("--max-body", s.serve.max_body, "Bytes of a request's body; more: 413")->capture_default_str();
    sub_->add_option("--max-queries", s.serve.max_queries, "Queries per request; more: 413")->capture_default_str();
    sub_->add_option("--max-residues", s.serve.max_residues, "Residues per query; more: 413")->capture_default_str();
    sub_->add_option("--max-connections", s.serve.max_connections, "Open connections; more: 503")->capture_default_str();
    sub_->add_option("--max-settings", s.serve.max_engines, "Distinct search settings kept ready")->capture_default_str();
    sub_->add_option("--timeout", s.timeout_s, "Seconds a search may take; longer: 503")->capture_default_str();
    sub_->add_option("--client-timeout", s.client_timeout_s,
                     "Seconds a connection may wait idle, and twice that for a request to arrive whole")
        ->capture_default_str();
    sub_->add_option("--matrix", s.request.matrix, "Default substitution matrix (requests may name a built-in one)");
    sub_->add_option("--gap-open", s.gap_open, "Default gap open penalty [default: per matrix]");
    sub_->add_option("--gap-extend", s.gap_extend, "Default gap extension penalty [default: per matrix]");
    sub_->add_option("-k,--max-target-seqs", s.request.max_target_seqs, "Default hits per query")->capture_default_str();
    sub_->add_option("-e,--evalue", s.request.evalue, "Default E-value threshold")->capture_default_str();
    sub_->add_option("--outfmt", s.request.outfmt, "Default output format of TSV answers")->capture_default_str();
    sub_->add_option("--max-hsps", s.request.max_hsps, "Default alignments per (query, subject, strand)")
        ->capture_default_str();
    add_threads(s.threads, "CPU threads (at most 4096); 0 = one per hardware thread");
    sub_->add_option("--backend", s.backend, "auto: the GPU when one is usable, else the CPU")
        ->check(CLI::IsMember({"auto", "cpu", "gpu"}))
        ->capture_default_str();
    sub_->add_option("--gpus", s.gpus, "GPUs the score pass spreads over (0: all)")->capture_default_str();
    sub_->add_option("--gpu-mem", s.gpu_mem, "Device memory the GPU backend may use (e.g. 8G)");
    sub_->add_flag("-q,--quiet", s.quiet, "Only errors on stderr");
}

#ifndef SWGPU_HAVE_SERVE
const char* const without = "this swgpu was built without cpp-httplib or nlohmann::json; install Debian's "
                            "libcpp-httplib-dev and nlohmann-json3-dev and build again";
int serve_command::run(const std::string&) { throw runtime_failure("swgpu serve: " + std::string(without)); }
int align_on_server(const align_settings&, const given_options&) {
    throw runtime_failure("swgpu align --server: " + std::string(without));
}
#else
int serve_command::run(const std::string&) {
    settings& s = *s_;
    // SIGTERM and SIGINT: stop accepting, answer the requests in flight, exit 0 (before any thread starts).
    io::stop_signals signals([&s](int sig) {
        if (!s.quiet) std::cerr << "swgpu: serve: stopping (signal " << sig << "); answering the requests in flight\n";
    });
    io::request_settings& d = s.request;
    if (sub_->get_option("--gap-open")->count()) d.gap_open = s.gap_open;
    if (sub_->get_option("--gap-extend")->count()) d.gap_extend = s.gap_extend;
    if (d.max_target_seqs < 1 || !(d.evalue > 0) || d.max_hsps < 1)
        throw usage_error("-k and --max-hsps must be at least 1, -e positive");
    if (io::parse_outfmt(d.outfmt).kind == io::format_kind::sam) throw usage_error("--outfmt sam is not served");
    std::tie(s.serve.host, s.serve.port) = io::parse_listen(s.listen);
    if (!s.token_file.empty()) s.serve.token = io::read_token_file(s.token_file);
    s.serve.timeout = std::chrono::seconds(s.timeout_s);
    s.serve.idle_timeout = std::chrono::seconds(s.client_timeout_s);
    s.serve.read_timeout = std::chrono::seconds(2 * s.client_timeout_s);
    const bool gpu = s.backend == "gpu" || (s.backend == "auto" && gpu::available());
    if (s.backend == "gpu" && !gpu::available()) throw runtime_failure("--backend gpu: no usable GPU (" + gpu::build_info() + ")");
    const std::size_t gpu_mem = io::parse_gpu_mem(s.gpu_mem);
    if (gpu && !sub_->get_option("--max-settings")->count()) s.serve.max_engines = 1;  // each holds the database
    io::service_setup setup{.db = s.db, .version = SWGPU_VERSION, .serve = s.serve, .defaults = d,
                            .batching = {std::chrono::milliseconds(s.batch_wait_ms), s.max_batch, s.max_queue},
                            .threads = static_cast<int>(s.threads), .quiet = s.quiet};
    if (gpu) {
        setup.devices = [gpus = s.gpus, gpu_mem](bool alignments) -> std::unique_ptr<search_devices> {
            return std::make_unique<gpu::gpu_search>(gpu::gpu_search::of(gpus, gpu_mem, alignments),
                                                     std::chrono::steady_clock::now());
        };
        setup.gpus = s.gpus > 0 ? s.gpus : gpu::device_count();
    }
    io::run_service(std::move(setup), signals);
    return 0;
}

// The settings given on the command line, as a request's; the query file's bytes as the body (the server reads them
// as align reads a file).
int align_on_server(const align_settings& s, const given_options& given) {
    if (!s.db.empty() || !s.batch.empty() || !s.dotplot.empty())
        throw usage_error("with --server, give QUERY only (the server holds the database; no --batch or --dotplot)");
    if (s.query.empty()) throw usage_error("QUERY is required; usage: swgpu align --server URL QUERY [options]");
    io::refuse_overwriting({{"-o", s.out}}, {{"the query file", s.query}});  // docs/conventions.md, as align's
    std::vector<std::pair<std::string, std::string>> p{{"outfmt", s.outfmt}};
    const auto num = [](double v) { std::ostringstream o; o.precision(17); o << v; return o.str(); };
    if (!s.matrix.empty()) p.emplace_back("matrix", s.matrix);
    if (given.gap_open) p.emplace_back("gap_open", std::to_string(s.gap_open));
    if (given.gap_extend) p.emplace_back("gap_extend", std::to_string(s.gap_extend));
    if (given.match) p.emplace_back("match", std::to_string(s.match));
    if (given.mismatch) p.emplace_back("mismatch", std::to_string(s.mismatch));
    if (given.strand) p.emplace_back("strand", s.strand);
    if (given.max_target_seqs) p.emplace_back("max_target_seqs", std::to_string(s.max_target_seqs));
    if (given.evalue) p.emplace_back("evalue", num(s.evalue));
    if (given.zdrop) p.emplace_back("zdrop", std::to_string(s.zdrop));
    if (s.no_evalue) p.emplace_back("no_evalue", "true");
    if (s.seqtype != "auto") p.emplace_back("seqtype", s.seqtype);
    if (s.seg == "yes") p.emplace_back("seg", "yes");
    if (s.dust == "yes") p.emplace_back("dust", "yes");
    if (s.comp_based_stats) p.emplace_back("comp_based_stats", "1");
    if (s.max_hsps != 1) p.emplace_back("max_hsps", std::to_string(s.max_hsps));
    if (s.eqx) p.emplace_back("eqx", "true");
    io::search_on_server(s.server, p, s.query, s.out);
    return 0;
}
#endif

}  // namespace swgpu::app
