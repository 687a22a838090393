// Errors are exceptions that carry the exit code users see (docs/conventions.md): they are thrown where the problem is
// found, with the file and record in the message, and caught once in app/, which prints "swgpu: error: <what>".
#pragma once

#include <stdexcept>
#include <string>

namespace swgpu {

enum class exit_code : int {
    success = 0,
    bad_input = 1,
    bad_command_line = 2,
    runtime_failure = 3,
    out_of_memory = 4,
    output_failed = 5,
    not_converged = 6,  // an iterative solve (swgpu sor) stopped above its tolerance; its result is still written
    interrupted = 130,  // a long library call stopped at the caller's request (core/cancel.hpp): Ctrl-C in Python
};

class error : public std::runtime_error {
public:
    error(exit_code code, const std::string& what) : std::runtime_error(what), code_(code) {}
    exit_code code() const noexcept { return code_; }

private:
    exit_code code_;
};

// A failure of a device (a GPU's error, or its memory running out), with the exit code users see. The search service
// goes on on the CPU after one (docs/serve.md); everything else treats it as the error it carries.
class device_failure : public error {
public:
    using error::error;
};

// Bad input data: a sequence file, a matrix file. `where` is "FILE" or "FILE:RECORD".
inline error input_error(const std::string& where, const std::string& what) {
    return error(exit_code::bad_input, where.empty() ? what : where + ": " + what);
}
inline error usage_error(const std::string& what) { return error(exit_code::bad_command_line, what); }
inline error runtime_failure(const std::string& what) { return error(exit_code::runtime_failure, what); }
inline error out_of_memory(const std::string& what) { return error(exit_code::out_of_memory, what); }
inline error output_error(const std::string& where, const std::string& what) {
    return error(exit_code::output_failed, where + ": " + what);
}

}  // namespace swgpu
