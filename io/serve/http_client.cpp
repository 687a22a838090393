#include "io/serve/http_client.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "io/output_file.hpp"

namespace swgpu::io {

http_answer post(const std::string& url, const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
                 const std::string& body, const std::string& content_type, const std::string& accept,
                 const std::string& token, int timeout_s) {
    if (url.rfind("http://", 0) != 0) throw usage_error("--server " + url + ": an http://HOST:PORT address expected");
    std::string rest = url.substr(7), prefix;
    if (const auto slash = rest.find('/'); slash != std::string::npos) {
        prefix = rest.substr(slash);
        rest.resize(slash);
        while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    }
    httplib::Client client("http://" + rest);
    client.set_connection_timeout(10);
    client.set_read_timeout(timeout_s);
    client.set_write_timeout(timeout_s);
    httplib::Headers headers{{"Accept", accept}};
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    std::string query;
    for (const auto& [k, v] : params)
        query += (query.empty() ? "?" : "&") + httplib::detail::encode_query_param(k) + "=" +
                 httplib::detail::encode_query_param(v);
    auto r = client.Post(prefix + path + query, headers, body, content_type.c_str());
    if (!r) throw runtime_failure("--server " + url + ": no answer (" + httplib::to_string(r.error()) + ")");
    return {r->status, r->body, r->get_header_value("Content-Type")};
}

std::pair<std::string, std::string> error_of(const http_answer& a) {
    const nlohmann::json v = nlohmann::json::parse(a.body, nullptr, false);  // no exception: discarded when not JSON
    if (v.is_object() && v.contains("error") && v["error"].is_object()) {
        const nlohmann::json& e = v["error"];
        if (e.contains("kind") && e.contains("message") && e["kind"].is_string() && e["message"].is_string())
            return {e["kind"].get<std::string>(), e["message"].get<std::string>()};
    }
    return {"http_" + std::to_string(a.status), a.body.substr(0, 200)};
}

void search_on_server(const std::string& url, const std::vector<std::pair<std::string, std::string>>& params,
                      const std::string& query, const std::string& out) {
    std::string body;
    if (query == "-") {
        body.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
        std::ifstream in(query, std::ios::binary);
        if (!in) throw input_error(query, "cannot open the query file");
        body.assign(std::istreambuf_iterator<char>(in), {});
    }
    const char* token = std::getenv("SWGPU_TOKEN");
    output_file answer(out);  // fails before the request when unwritable
    const http_answer a = post(url, "/search", params, body, "text/x-fasta", "text/tab-separated-values",
                               token ? token : "", 3600);
    if (a.status != 200) {
        const auto [kind, message] = error_of(a);
        const exit_code code = a.status == 400 && (kind == "bad_setting" || kind == "unknown_setting" || kind == "refused_setting")
                                   ? exit_code::bad_command_line
                               : a.status == 400 || a.status == 413 ? exit_code::bad_input
                                                                    : exit_code::runtime_failure;
        throw error(code, "--server " + url + " answered " + std::to_string(a.status) + " (" + kind + "): " + message);
    }
    answer.write(a.body);
    answer.commit();
}

}  // namespace swgpu::io
