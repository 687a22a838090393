// The client side of the service (`swgpu align --server URL`): one POST over HTTP/1.1 with cpp-httplib's client.
#pragma once

#include <string>
#include <vector>
#include <utility>

namespace swgpu::io {

struct http_answer {
    int status = 0;
    std::string body, content_type;
};

// POSTs `body` to URL (http://HOST:PORT[/PREFIX]) + `path`, with `params` as the query string; a bearer `token` when
// not empty. Throws runtime_failure when the server cannot be reached or the answer is cut off.
http_answer post(const std::string& url, const std::string& path, const std::vector<std::pair<std::string, std::string>>& params,
                 const std::string& body, const std::string& content_type, const std::string& accept,
                 const std::string& token, int timeout_s);

// The message of a service's JSON error answer ({"error": {"kind", "message"}}), or the body as it is.
std::pair<std::string, std::string> error_of(const http_answer& a);

// `swgpu align --server URL`: the bytes of the query file `query` ("-": stdin) POSTed to URL's /search with the
// settings `params` (and the bearer token of SWGPU_TOKEN when set), the answer written to `out` ("" or "-": stdout),
// which is opened first (an unwritable destination fails before the request). A refusal is an error with its exit
// code: a bad setting 2, a bad or too large request 1, anything else 3.
void search_on_server(const std::string& url, const std::vector<std::pair<std::string, std::string>>& params,
                      const std::string& query, const std::string& out);

}  // namespace swgpu::io
