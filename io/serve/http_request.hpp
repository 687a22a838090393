// A request to the search service: its JSON (nlohmann::json), its settings from JSON or the query string, refused
// with an HTTP status, and its queries given as JSON "sequences" (the FASTA body: read_sequences_text, plan_engine in
// http_server.hpp). Internal to io/serve: http_server.cpp and http_request.cpp include it.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/align/sequence.hpp"
#include "io/serve/http_server.hpp"

namespace swgpu::io::http_request {

// JSON through nlohmann::json (objects keep their members' order: settings apply, and fail, in the order given).
using json = nlohmann::ordered_json;

// `s` as a JSON string literal, with its quotes; bytes that are not UTF-8 become U+FFFD.
std::string json_string(std::string_view s);
// A number as JSON writes it, in its shortest round-trip form; NaN and infinities as null.
std::string json_number(double v);
// A request's JSON body: at most max_depth nested arrays and objects, no member named twice in one object.
json parse_body(const std::string& text, int max_depth = 32);

// A request refused: its HTTP status, the kind and message of its JSON error body.
struct refusal {
    int status;
    std::string kind, message;
};
[[noreturn]] void refuse(int status, std::string kind, std::string message);

std::string lower(std::string s);

// One setting, from JSON (`v`) or from the query string (`text`).
void apply(request_settings& s, const std::string& key, const json* v, const std::string* text);

// What the engine depends on: everything but the output's form (alignments and placements are asked for apart).
std::string engine_key(const request_settings& s, seq_type t, bool alignments, bool placements);

// JSON's "sequences": [{"id": ..., "residues": ...}], by the library's rules (a name without blanks, letters and '*').
sequence_set json_sequences(const json& seqs);

}  // namespace swgpu::io::http_request
