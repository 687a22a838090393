#include "io/serve/http_server.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/align/alignment.hpp"
#include "core/align/scoring.hpp"
#include "core/error.hpp"
#include "io/align/output.hpp"
#include "io/align/sequence_reader.hpp"
#include "io/output_file.hpp"
#include "io/serve/http_request.hpp"

namespace swgpu::io {

using clock = std::chrono::steady_clock;

using namespace http_request;

namespace {

// ---- answers ----

std::string error_body(const std::string& kind, const std::string& message) {
    return "{\"error\": {\"kind\": " + json_string(kind) + ", \"message\": " + json_string(message) + "}}\n";
}

std::string hits_json(const batch_share& share, const batch_part& part) {
    const scoring& sc = share.engine->sc();
    const database_scan& scan = share.batch->results.scan;
    results_view view{sc, part.queries, scan, part.hits, part.searched};
    view.query_letters = part.query_letters ? &*part.query_letters : nullptr;
    std::string out = "{\"hits\": [";
    bool first = true;
    for (std::size_t q = 0; q < part.hits.size(); ++q) {
        for (const printed_hit& h : part.hits[q]) {
            const blast_values v = blast_values_of(view, q, h);
            std::string qseq, sseq;
            if (!h.aln.ops.empty()) std::tie(qseq, sseq) = blast_rows(view, q, h);
            const double nan = std::nan("");
            out += first ? "\n" : ",\n";
            first = false;
            out += "{\"qseqid\": " + json_string(v.qseqid) + ", \"sseqid\": " + json_string(v.sseqid) +
                   ", \"pident\": " + json_number(v.pident) + ", \"length\": " + std::to_string(v.length) +
                   ", \"mismatch\": " + std::to_string(v.mismatch) + ", \"gapopen\": " + std::to_string(v.gapopen) +
                   ", \"qstart\": " + std::to_string(v.qstart) + ", \"qend\": " + std::to_string(v.qend) +
                   ", \"sstart\": " + std::to_string(v.sstart) + ", \"send\": " + std::to_string(v.send) +
                   ", \"evalue\": " + json_number(v.has_statistics ? v.evalue : nan) +
                   ", \"bitscore\": " + json_number(v.has_statistics ? v.bitscore : nan) +
                   ", \"score\": " + std::to_string(v.score) + ", \"cigar\": " + json_string(cigar_string(h.aln.ops)) +
                   ", \"qlen\": " + std::to_string(v.qlen) + ", \"slen\": " + std::to_string(v.slen) +
                   ", \"sstrand\": " + json_string(v.sstrand) + ", \"nident\": " + std::to_string(v.nident) +
                   ", \"positive\": " + std::to_string(v.positive) + ", \"gaps\": " + std::to_string(v.gaps) +
                   ", \"qseq\": " + json_string(qseq) + ", \"sseq\": " + json_string(sseq) + "}";
        }
    }
    return out + (first ? "]}\n" : "\n]}\n");
}

// ---- connections ----

thread_local bool over_capacity = false;

// One thread per connection (so that idle or slow connections hold no other client's place), at most `max`; beyond,
// the connection is answered 503 on the accepting thread and closed.
class connection_threads final : public httplib::TaskQueue {
public:
    explicit connection_threads(std::size_t max) : max_(max) {}
    void enqueue(std::function<void()> fn) override {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (active_ >= max_) {
                lock.unlock();
                over_capacity = true;
                fn();
                over_capacity = false;
                return;
            }
            ++active_;
        }
        auto* task = new std::function<void()>(std::move(fn));
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, std::size_t(2) << 20);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_t t;
        struct start {
            static void* run(void* arg) {
                auto* self = static_cast<std::pair<connection_threads*, std::function<void()>*>*>(arg);
                connection_threads* pool = self->first;
                std::function<void()>* f = self->second;
                delete self;
                try {
                    (*f)();
                } catch (...) {
                }
                delete f;
                pool->done();
                return nullptr;
            }
        };
        auto* arg = new std::pair<connection_threads*, std::function<void()>*>(this, task);
        if (pthread_create(&t, &attr, &start::run, arg) != 0) {
            delete arg;
            over_capacity = true;  // no thread: refused at once
            (*task)();
            over_capacity = false;
            delete task;
            done();
        }
        pthread_attr_destroy(&attr);
    }
    void shutdown() override {
        std::unique_lock<std::mutex> lock(mutex_);
        idle_.wait(lock, [this] { return active_ == 0; });
    }
    std::size_t active() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return active_;
    }

private:
    void done() {
        const std::lock_guard<std::mutex> lock(mutex_);
        --active_;
        idle_.notify_all();
    }
    std::size_t max_;
    mutable std::mutex mutex_;
    std::condition_variable idle_;
    std::size_t active_ = 0;
};

bool wait_for(int fd, short events, clock::time_point until) {
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - clock::now()).count();
        if (left <= 0) return false;
        pollfd p{fd, events, 0};
        const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 100)));
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

// A connection's socket as httplib reads and writes it: each read waits at most until the request's deadline (a
// slow client is cut off), each write at most the write timeout.
class socket_stream final : public httplib::Stream {
public:
    explicit socket_stream(int fd) : fd_(fd) {}
    void deadline(clock::time_point d) { deadline_ = d; }
    bool is_readable() const override { return wait_for(fd_, POLLIN, deadline_); }
    bool is_writable() const override { return wait_for(fd_, POLLOUT, clock::now() + std::chrono::seconds(10)); }
    ssize_t read(char* ptr, size_t size) override {
        if (!is_readable()) return -1;
        for (;;) {
            const ssize_t n = ::recv(fd_, ptr, size, 0);
            if (n < 0 && errno == EINTR) continue;
            return n;
        }
    }
    ssize_t write(const char* ptr, size_t size) override {
        if (!is_writable()) return -1;
        for (;;) {
            const ssize_t n = ::send(fd_, ptr, size, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            return n;
        }
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override { address(ip, port, true); }
    void get_local_ip_and_port(std::string& ip, int& port) const override { address(ip, port, false); }
    socket_t socket() const override { return fd_; }

private:
    void address(std::string& ip, int& port, bool peer) const {
        sockaddr_storage a{};
        socklen_t len = sizeof a;
        if ((peer ? ::getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len)
                  : ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
            return;
        char buf[INET6_ADDRSTRLEN] = {};
        if (a.ss_family == AF_INET) {
            const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
            ::inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
            port = ntohs(in->sin_port);
        } else if (a.ss_family == AF_INET6) {
            const auto* in = reinterpret_cast<const sockaddr_in6*>(&a);
            ::inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
            port = ntohs(in->sin6_port);
        }
        ip = buf;
    }
    int fd_;
    clock::time_point deadline_ = clock::now();
};

// httplib's server with this service's connection handling (its keep-alive loop, with the deadlines above).
class server final : public httplib::Server {
public:
    std::chrono::milliseconds idle_timeout{5000}, read_timeout{10000};
    std::atomic<bool> stopping{false};
    std::atomic<std::uint64_t> refused_connections{0};
    // httplib listens with a backlog of 5: connections beyond wait for the kernel's retries of the handshake (seconds).
    // Listening again on the bound socket sets a longer queue.
    void backlog(int n) { ::listen(svr_sock_, n); }

private:
    bool process_and_close_socket(socket_t sock) override {
        bool ok = false;
        if (over_capacity) {
            refused_connections.fetch_add(1);
            const std::string body = error_body("too_many_connections", "the server holds its most connections");
            const std::string reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
                                      "Connection: close\r\nContent-Length: " +
                                      std::to_string(body.size()) + "\r\n\r\n" + body;
            (void)::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        } else {
            // Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm holds the body for
            // the client's delayed acknowledgement (40 ms a request on a kept-alive connection).
            const int one = 1;
            ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            socket_stream strm(sock);
            for (std::size_t count = keep_alive_max_count_; count > 0; --count) {
                // The next request: wait for its first bytes at most idle_timeout, and while the server runs.
                const auto until = clock::now() + idle_timeout;
                bool readable = false;
                while (!stopping.load() && clock::now() < until)
                    if ((readable = wait_for(sock, POLLIN, std::min(until, clock::now() + std::chrono::milliseconds(100)))))
                        break;
                if (!readable) break;
                strm.deadline(clock::now() + read_timeout);
                bool closed = false;
                ok = process_request(strm, count == 1 || stopping.load(), closed, {});
                if (!ok || closed) break;
            }
        }
        ::shutdown(sock, SHUT_RDWR);
        ::close(sock);
        return ok;
    }
};

constexpr double latency_bounds[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
constexpr std::size_t latency_buckets = sizeof latency_bounds / sizeof latency_bounds[0];

}  // namespace

struct http_server::impl {
    serve_options opt;
    request_settings defaults;
    service_facts facts;
    engine_maker make;
    search_batcher& batcher;
    server svr;
    connection_threads* threads = nullptr;  // owned by svr's listen

    std::mutex engines_mutex;
    std::list<std::pair<std::string, std::shared_ptr<resident_search>>> engines;  // most recently used first

    std::mutex metrics_mutex;
    std::map<int, std::uint64_t> by_status;
    std::uint64_t latency_counts[latency_buckets + 1] = {};
    double latency_sum = 0;
    std::uint64_t searches = 0, queries = 0, timeouts = 0, failures = 0;
    std::atomic<int> in_flight{0};

    impl(serve_options o, request_settings d, service_facts f, engine_maker m, search_batcher& b)
        : opt(std::move(o)), defaults(std::move(d)), facts(std::move(f)), make(std::move(m)), batcher(b) {}

    void log(const std::string& line) const {
        if (opt.log) opt.log(line);
    }

    void count(int status, double seconds) {
        const std::lock_guard<std::mutex> lock(metrics_mutex);
        ++by_status[status];
        std::size_t b = 0;
        while (b < latency_buckets && seconds > latency_bounds[b]) ++b;
        ++latency_counts[b];
        latency_sum += seconds;
    }

    std::shared_ptr<resident_search> engine(const request_settings& s, seq_type t, bool alignments, bool placements) {
        const std::string key = engine_key(s, t, alignments, placements);
        const std::lock_guard<std::mutex> lock(engines_mutex);
        for (auto it = engines.begin(); it != engines.end(); ++it)
            if (it->first == key) {
                engines.splice(engines.begin(), engines, it);
                return engines.front().second;
            }
        std::shared_ptr<resident_search> e = make(s, t, alignments, placements);
        engines.emplace_front(key, e);
        while (engines.size() > opt.max_engines) engines.pop_back();
        return e;
    }

    bool authorized(const httplib::Request& req) const {
        if (opt.token.empty()) return true;
        const std::string given = req.get_header_value("Authorization");
        const std::string want = "Bearer " + opt.token;
        unsigned diff = given.size() == want.size() ? 0 : 1;
        for (std::size_t k = 0; k < given.size() && k < want.size(); ++k) diff |= unsigned(given[k] ^ want[k]);
        return diff == 0;
    }

    void answer_error(httplib::Response& res, int status, const std::string& kind, const std::string& message) {
        res.status = status;
        res.set_content(error_body(kind, message), "application/json");
    }

    // POST /search
    // A request's settings (the query string, then a JSON body's members) and its queries (FASTA text, or JSON's
    // "sequences" or "fasta"), within the limits.
    sequence_set read_request(const httplib::Request& req, request_settings& s) const {
        sequence_set queries;
        const std::string type = lower(req.get_header_value("Content-Type"));
        const bool is_json = type.find("json") != std::string::npos ||
                             (type.find("fasta") == std::string::npos && !req.body.empty() && req.body.front() == '{');
        // Settings from the query string only (httplib adds a form body's fields to params: a body is never read so).
        httplib::Params query;
        if (const auto q = req.target.find('?'); q != std::string::npos)
            httplib::detail::parse_query_text(req.target.substr(q + 1), query);
        for (const auto& [k, v] : query) apply(s, k, nullptr, &v);
        if (is_json) {
            json body;
            try {
                body = parse_body(req.body);
            } catch (const std::exception& e) {  // nlohmann's parse_error, or parse_body's checks
                refuse(400, "bad_json", e.what());
            }
            if (!body.is_object()) refuse(400, "bad_json", "the body must be a JSON object");
            const json *seqs = nullptr, *fasta = nullptr;
            for (const auto& [k, v] : body.items()) {
                if (k == "sequences") seqs = &v;
                else if (k == "fasta") fasta = &v;
                else apply(s, k, &v, nullptr);
            }
            if ((seqs != nullptr) == (fasta != nullptr))
                refuse(400, "bad_json", "give the queries as \"sequences\" or as \"fasta\" (one of them)");
            if (fasta && !fasta->is_string()) refuse(400, "bad_json", "fasta: a string expected");
            queries = fasta ? read_sequences_text(fasta->get_ref<const std::string&>(), "request") : json_sequences(*seqs);
        } else {
            queries = read_sequences_text(req.body, "request");
        }
        if (queries.size() > opt.max_queries)
            refuse(413, "too_many_queries", std::to_string(queries.size()) + " queries; at most " +
                                                std::to_string(opt.max_queries) + " per request");
        for (std::size_t k = 0; k < queries.size(); ++k)
            if (queries.length(k) > opt.max_residues)
                refuse(413, "query_too_long", queries.names[k] + ": " + std::to_string(queries.length(k)) +
                                                  " residues; at most " + std::to_string(opt.max_residues) + " per query");
        return queries;
    }

    // The bytes `swgpu align` prints for the request's queries: io/align/output over its share of the batch.
    std::string tsv_answer(const batch_share& share, const batch_part& part, const request_settings& s,
                           const output_format& fmt) const {
        text_buffer out("the answer");
        run_header header{facts.version, "swgpu serve", "request", facts.database, ""};
        const auto& results = share.batch->results;
        results_view view{share.engine->sc(), part.queries, results.scan, part.hits, part.searched,
                          results.statistics ? &*results.statistics : nullptr};
        view.query_letters = part.query_letters ? &*part.query_letters : nullptr;
        view.split_reads = s.max_hsps > 1 || s.zdrop.has_value();
        write_results(fmt, header, view, out);
        return std::move(out).text();
    }

    // POST /search: the request read, typed against the database, queued for its engine's batch, answered.
    void search(const httplib::Request& req, httplib::Response& res) {
        request_settings s = defaults;
        sequence_set queries = read_request(req, s);
        // The queries' type, as `swgpu align` types a query file, held against the database's.
        const seq_type t = s.seqtype == "dna" ? seq_type::dna : s.seqtype == "protein" ? seq_type::protein : classify(queries);
        if (t != facts.type)
            refuse(400, "type_mismatch", std::string("the queries are ") + type_name(t) + " but the database " +
                                             facts.database + " is " + type_name(facts.type));
        const bool tsv = lower(req.get_header_value("Accept")).find("text/tab-separated-values") != std::string::npos;
        output_format fmt = parse_outfmt(s.outfmt);
        fmt.eqx = s.eqx;
        // Every engine computes the alignments (a format that prints none prints the same bytes from them: tested),
        // so that requests differing only in columns share an engine and its batches.
        std::shared_ptr<resident_search> engine = this->engine(s, t, true, tsv && fmt.kind == format_kind::paf);
        auto abandoned = std::make_shared<std::atomic<bool>>(false);
        std::future<batch_share> answer = batcher.submit(engine, std::move(queries), abandoned);
        if (answer.wait_for(opt.timeout) != std::future_status::ready) {
            abandoned->store(true);
            {
                const std::lock_guard<std::mutex> lock(metrics_mutex);
                ++timeouts;
            }
            refuse(503, "timeout", "no answer within " + std::to_string(opt.timeout.count()) + " ms");
        }
        const batch_share share = answer.get();
        const batch_part part = part_of(share);
        {
            const std::lock_guard<std::mutex> lock(metrics_mutex);
            ++searches;
            this->queries += part.queries.size();
        }
        if (tsv) res.set_content(tsv_answer(share, part, s, fmt), "text/tab-separated-values");
        else res.set_content(hits_json(share, part), "application/json");
        res.set_header("X-Batch-Requests", std::to_string(share.batch_requests));
    }

    std::string health() {
        const search_batcher::counters c = batcher.stats();
        std::string backend;
        {
            const std::lock_guard<std::mutex> lock(metrics_mutex);  // not engines_mutex: held while an engine is made
            backend = facts.backend;
        }
        return "{\"status\": \"ok\", \"database\": " + json_string(facts.database) +
               ", \"sequences\": " + std::to_string(facts.sequences) + ", \"residues\": " +
               std::to_string(facts.residues) + ", \"type\": " + json_string(type_name(facts.type)) +
               ", \"backend\": " + json_string(backend) + ", \"gpus\": " + std::to_string(facts.gpus) +
               ", \"queue\": " + std::to_string(c.waiting) + ", \"searching\": " + (c.searching ? "true" : "false") +
               ", \"in_flight\": " + std::to_string(in_flight.load()) + "}\n";
    }

    std::string metrics() {
        const search_batcher::counters c = batcher.stats();
        std::string m;
        const auto metric = [&m](const char* name, const char* type, const char* help) {
            m += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
        };
        const std::lock_guard<std::mutex> lock(metrics_mutex);
        metric("swgpu_http_requests_total", "counter", "HTTP requests answered, by status code.");
        for (const auto& [code, n] : by_status)
            m += "swgpu_http_requests_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
        metric("swgpu_http_request_duration_seconds", "histogram", "Time from a request's arrival to its answer.");
        std::uint64_t cumulative = 0;
        for (std::size_t b = 0; b <= latency_buckets; ++b) {
            cumulative += latency_counts[b];
            m += "swgpu_http_request_duration_seconds_bucket{le=\"" +
                 (b < latency_buckets ? json_number(latency_bounds[b]) : std::string("+Inf")) + "\"} " +
                 std::to_string(cumulative) + "\n";
        }
        m += "swgpu_http_request_duration_seconds_sum " + json_number(latency_sum) + "\n";
        m += "swgpu_http_request_duration_seconds_count " + std::to_string(cumulative) + "\n";
        metric("swgpu_search_requests_total", "counter", "Search requests answered with hits.");
        m += "swgpu_search_requests_total " + std::to_string(searches) + "\n";
        metric("swgpu_search_queries_total", "counter", "Queries answered.");
        m += "swgpu_search_queries_total " + std::to_string(queries) + "\n";
        metric("swgpu_search_timeouts_total", "counter", "Searches not answered within the timeout.");
        m += "swgpu_search_timeouts_total " + std::to_string(timeouts) + "\n";
        metric("swgpu_search_failures_total", "counter", "Searches that failed (answered 503 and logged).");
        m += "swgpu_search_failures_total " + std::to_string(failures) + "\n";
        metric("swgpu_batches_total", "counter", "Passes over the database (each answers one or more requests).");
        m += "swgpu_batches_total " + std::to_string(c.batches) + "\n";
        metric("swgpu_batched_requests_total", "counter", "Requests searched in batches.");
        m += "swgpu_batched_requests_total " + std::to_string(c.requests) + "\n";
        metric("swgpu_queue_length", "gauge", "Requests waiting for a batch.");
        m += "swgpu_queue_length " + std::to_string(c.waiting) + "\n";
        metric("swgpu_connections", "gauge", "Open connections.");  // (threads: under metrics_mutex)
        m += "swgpu_connections " + std::to_string(threads ? threads->active() : 0) + "\n";
        metric("swgpu_refused_connections_total", "counter", "Connections refused beyond --max-connections.");
        m += "swgpu_refused_connections_total " + std::to_string(svr.refused_connections.load()) + "\n";
        return m;
    }

    // A search failed (a device, memory): logged; the engines are made again, on the CPU when the face says so.
    void failed(const std::string& what, bool device) {
        {
            const std::lock_guard<std::mutex> lock(metrics_mutex);
            ++failures;
        }
        log("search failed: " + what);
        const std::string backend = opt.on_failure && device ? opt.on_failure() : std::string();
        {
            const std::lock_guard<std::mutex> lock(engines_mutex);
            engines.clear();
        }
        const std::lock_guard<std::mutex> lock(metrics_mutex);  // (health reads the backend under it)
        if (!backend.empty() && backend != facts.backend) {
            log("searching on the " + backend + " from now on");
            facts.backend = backend;
        }
    }

    // Every route through here: the token, the answer or its refusal, the metrics.
    void handle(const httplib::Request& req, httplib::Response& res,
                void (impl::*route)(const httplib::Request&, httplib::Response&)) {
        const auto started = clock::now();
        ++in_flight;
        try {
            if (!authorized(req)) {
                res.set_header("WWW-Authenticate", "Bearer");
                refuse(401, "unauthorized", "a valid bearer token is required (Authorization: Bearer TOKEN)");
            }
            (this->*route)(req, res);
        } catch (const refusal& r) {
            answer_error(res, r.status, r.kind, r.message);
        } catch (const search_batcher::busy& e) {
            answer_error(res, 503, "busy", e.what());
        } catch (const device_failure& e) {  // a GPU's error or its memory taken: on the CPU from now on
            failed(e.what(), true);
            answer_error(res, 503, e.code() == exit_code::out_of_memory ? "out_of_memory" : "search_failed", e.what());
        } catch (const error& e) {
            const exit_code c = e.code();
            if (c == exit_code::bad_input || c == exit_code::bad_command_line) {
                answer_error(res, 400, c == exit_code::bad_input ? "bad_input" : "bad_setting", e.what());
            } else {
                failed(e.what(), c == exit_code::runtime_failure);
                answer_error(res, 503, "search_failed", e.what());
            }
        } catch (const std::bad_alloc&) {
            failed("out of memory", false);
            answer_error(res, 503, "out_of_memory", "out of memory");
        } catch (const std::exception& e) {
            failed(e.what(), true);
            answer_error(res, 503, "search_failed", e.what());
        }
        --in_flight;
        if (res.status == -1) res.status = 200;
        count(res.status, std::chrono::duration<double>(clock::now() - started).count());
    }
    void health_route(const httplib::Request&, httplib::Response& res) { res.set_content(health(), "application/json"); }
    void metrics_route(const httplib::Request&, httplib::Response& res) {
        res.set_content(metrics(), "text/plain; version=0.0.4");
    }
};

http_server::http_server(serve_options opt, request_settings defaults, service_facts facts, engine_maker make,
                         search_batcher& batcher)
    : p_(std::make_unique<impl>(std::move(opt), std::move(defaults), std::move(facts), std::move(make), batcher)) {
    impl& s = *p_;
    s.svr.idle_timeout = s.opt.idle_timeout;
    s.svr.read_timeout = s.opt.read_timeout;
    s.svr.set_payload_max_length(s.opt.max_body);
    s.svr.set_keep_alive_max_count(1000);
    s.svr.new_task_queue = [&s] {
        const std::lock_guard<std::mutex> lock(s.metrics_mutex);
        s.threads = new connection_threads(s.opt.max_connections);
        return s.threads;
    };
    using route = void (impl::*)(const httplib::Request&, httplib::Response&);
    const auto on = [&s](route r) {
        return [&s, r](const httplib::Request& req, httplib::Response& res) { s.handle(req, res, r); };
    };
    s.svr.Post("/search", on(&impl::search));
    s.svr.Get("/health", on(&impl::health_route));
    s.svr.Get("/metrics", on(&impl::metrics_route));
    // Known paths with another method: 405 with the methods allowed.
    const auto wrong = [&s](const char* allowed) {
        return [&s, allowed](const httplib::Request&, httplib::Response& res) {
            res.set_header("Allow", allowed);
            s.answer_error(res, 405, "method_not_allowed", std::string("use ") + allowed);
            s.count(405, 0);
        };
    };
    for (const auto& [path, allowed] : {std::pair{"/search", "POST"}, {"/health", "GET"}, {"/metrics", "GET"}}) {
        if (std::string(allowed) != "POST") s.svr.Post(path, wrong(allowed));
        if (std::string(allowed) != "GET") s.svr.Get(path, wrong(allowed));
        s.svr.Put(path, wrong(allowed));
        s.svr.Delete(path, wrong(allowed));
        s.svr.Patch(path, wrong(allowed));
        s.svr.Options(path, wrong(allowed));
    }
    // What httplib answers itself (an unknown path, a body too large, a request it cannot parse): the JSON error.
    s.svr.set_error_handler([&s](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        const int st = res.status;
        const std::string kind = st == 404 ? "not_found" : st == 413 ? "body_too_large" : st == 414 ? "uri_too_long"
                                 : st == 405 ? "method_not_allowed" : "bad_request";
        // cpp-httplib bounds a form's body (application/x-www-form-urlencoded, curl -d's default) at 8 KiB.
        const bool form = lower(req.get_header_value("Content-Type")).find("x-www-form-urlencoded") != std::string::npos;
        const std::string message =
            st == 404   ? "unknown path; the service answers POST /search, GET /health, GET /metrics"
            : st == 413 ? (form ? "a body sent as application/x-www-form-urlencoded is limited to 8192 bytes; send FASTA "
                                  "as text/x-fasta (curl -H 'Content-Type: text/x-fasta') or JSON"
                                : "the body is larger than " + std::to_string(s.opt.max_body) + " bytes")
                        : "the request could not be read as HTTP/1.1";
        s.answer_error(res, st, kind, message);
        s.count(st, 0);
    });
}

http_server::~http_server() = default;

void http_server::prepare() {
    const request_settings& d = p_->defaults;
    const output_format fmt = parse_outfmt(d.outfmt);
    if (fmt.kind == format_kind::sam) throw usage_error("--outfmt sam is not served (its header lists the database)");
    (void)p_->engine(d, p_->facts.type, true, false);
}

int http_server::bind() {
    // A descriptor per connection: the soft limit raised toward the hard one to hold max_connections (1024 is common).
    rlimit fds{};
    if (::getrlimit(RLIMIT_NOFILE, &fds) == 0) {
        const rlim_t want = std::min<rlim_t>(fds.rlim_max, static_cast<rlim_t>(p_->opt.max_connections) + 1024);
        if (fds.rlim_cur < want) {
            fds.rlim_cur = want;
            (void)::setrlimit(RLIMIT_NOFILE, &fds);
        }
    }
    const int port = p_->opt.port == 0 ? p_->svr.bind_to_any_port(p_->opt.host)
                                       : (p_->svr.bind_to_port(p_->opt.host, p_->opt.port) ? p_->opt.port : -1);
    if (port < 0)
        throw runtime_failure("cannot listen on " + p_->opt.host + ":" + std::to_string(p_->opt.port) + " (" +
                              std::strerror(errno) + ")");
    p_->svr.backlog(static_cast<int>(std::clamp<std::size_t>(p_->opt.max_connections, 16, 65535)));
    return port;
}

std::pair<std::string, int> parse_listen(const std::string& text) {
    const auto colon = text.rfind(':');
    std::string host = colon == std::string::npos ? text : text.substr(0, colon);
    const std::string port = colon == std::string::npos ? "" : text.substr(colon + 1);
    if (host.size() > 1 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty() || port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(port) > 65535)
        throw usage_error("--listen " + text + ": HOST:PORT expected (e.g. 127.0.0.1:8080)");
    return {host, std::stoi(port)};
}

std::string read_token_file(const std::string& path) {
    std::ifstream in(path);
    std::string token;
    if (!in) throw input_error(path, "cannot read the token file");
    std::getline(in, token);
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
    if (token.empty()) throw input_error(path, "the token file's first line is empty");
    return token;
}

struct stop_signals::impl {
    sigset_t set;
    std::function<void(int)> on_stop;
    std::atomic<http_server*> serving{nullptr};
    std::atomic<bool> waiting{true};
    std::thread waiter;
};

stop_signals::stop_signals(std::function<void(int)> on_stop) : p_(std::make_unique<impl>()) {
    impl& s = *p_;
    s.on_stop = std::move(on_stop);
    sigemptyset(&s.set);
    sigaddset(&s.set, SIGTERM);
    sigaddset(&s.set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &s.set, nullptr);
    ::signal(SIGPIPE, SIG_IGN);  // a client gone: its write fails, the server goes on
    s.waiter = std::thread([&s] {
        int sig = 0;
        sigwait(&s.set, &sig);
        if (!s.waiting.load()) return;
        http_server* server = s.serving.load();
        if (!server) std::_Exit(0);
        if (s.on_stop) s.on_stop(sig);
        server->stop();
    });
}

stop_signals::~stop_signals() {
    if (p_->waiting.exchange(false)) pthread_kill(p_->waiter.native_handle(), SIGTERM);  // (no signal came)
    p_->waiter.join();
}

void stop_signals::serve(http_server& server) {
    p_->serving.store(&server);
    server.listen();
    p_->serving.store(nullptr);
}

void http_server::listen() {
    p_->svr.listen_after_bind();
    const std::lock_guard<std::mutex> lock(p_->metrics_mutex);
    p_->threads = nullptr;  // httplib deleted it
}

void http_server::stop() {
    p_->svr.stopping.store(true);
    p_->svr.stop();
}

}  // namespace swgpu::io
