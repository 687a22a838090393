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

}  // namespace swgpu::io
