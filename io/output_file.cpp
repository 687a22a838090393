#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace swgpu::io {

namespace {

constexpr std::size_t buffer_limit = std::size_t(1) << 20;

std::string reason(int err) { return std::strerror(err); }

// Temporary files that exist right now, so that an interrupted run (Ctrl-C, kill) removes them too: the handler of
// SIGINT, SIGTERM and SIGHUP unlinks every registered path (unlink is async-signal-safe) and then dies of the signal
// with its default action. Slots are fixed C strings, claimed and released with atomic flags, never allocated.
constexpr int temp_slots = 8;
constexpr std::size_t temp_path_max = 4096;
struct temp_slot {
    std::atomic<bool> used{false};
    std::atomic<bool> live{false};
    char path[temp_path_max];
};
temp_slot temp_files[temp_slots];

extern "C" void remove_temp_files_and_die(int sig) {
    remove_temporary_files();
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

void install_cleanup_handlers() {
    static const bool installed = [] {
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction old{};
            ::sigaction(sig, nullptr, &old);
            if (old.sa_handler == SIG_IGN) continue;  // e.g. nohup: leave an ignored signal ignored
            struct sigaction act{};
            act.sa_handler = remove_temp_files_and_die;
            ::sigemptyset(&act.sa_mask);
            ::sigaction(sig, &act, nullptr);
        }
        return true;
    }();
    (void)installed;
}

// Registers a temporary path; returns its slot, or -1 when all are taken (the file is then only removed by the
// destructor, as before).
int register_temp(const std::string& path) {
    if (path.size() + 1 > temp_path_max) return -1;
    install_cleanup_handlers();
    for (int k = 0; k < temp_slots; ++k) {
        bool expected = false;
        if (!temp_files[k].used.compare_exchange_strong(expected, true)) continue;
        std::memcpy(temp_files[k].path, path.c_str(), path.size() + 1);
        temp_files[k].live.store(true);
        return k;
    }
    return -1;
}
void unregister_temp(int slot) {
    if (slot < 0) return;
    temp_files[slot].live.store(false);
    temp_files[slot].used.store(false);
}

}  // namespace

void remove_temporary_files() noexcept {
    for (auto& slot : temp_files)
        if (slot.live.load()) ::unlink(slot.path);
}

namespace {

// The umask cannot be read without setting it; mode bits a plain open(0666) would give.
mode_t default_file_mode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

}  // namespace

namespace {

// The file a symbolic link finally names (relative targets against the link's folder), so that the completed output
// replaces the target and the link stays; `path` itself when it is no link. A cycle of links is an output error.
std::string link_target(const std::string& path) {
    std::filesystem::path p = path;
    for (int hops = 0; hops < 40; ++hops) {
        std::error_code ec;
        if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec))) return p.string();
        const std::filesystem::path target = std::filesystem::read_symlink(p, ec);
        if (ec) return p.string();
        p = target.is_absolute() ? target : p.parent_path() / target;
    }
    throw output_error(path, "is a symbolic link in a cycle of links; give another -o");
}

}  // namespace

output_file::output_file(const std::string& given) : name_(given) {
    if (given.empty() || given == "-") {
        name_ = "stdout";
        fd_ = STDOUT_FILENO;
        return;
    }
    path_ = link_target(given);  // through a symbolic link: its target is written, the link kept
    const std::string& path = path_;
    struct stat st{};
    const bool exists = ::stat(path.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        throw output_error(path, "is a directory; give a file name to -o");
    if (exists && !S_ISREG(st.st_mode)) {
        // A device, FIFO or terminal: write to it directly (renaming onto it would replace the device node).
        fd_ = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0) throw output_error(path, "cannot open for writing (" + reason(errno) + ")");
        owns_fd_ = true;
        return;
    }
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    // The temporary name is registered before the file is created (O_EXCL, a new random name while one exists), so
    // that a signal arriving at any moment finds it: registered after creating it (as with mkstemp), a signal in
    // between, handled by any of the process's threads, left the file behind.
    install_cleanup_handlers();
    std::random_device seed;
    std::mt19937_64 random(seed());
    static constexpr char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for (int attempt = 0; fd_ < 0; ++attempt) {
        std::string name = dir + "." + base + ".swgpu-";
        for (int k = 0; k < 6; ++k) name += letters[random() % (sizeof letters - 1)];
        const int slot = register_temp(name);
        fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd_ >= 0) {
            temp_path_ = name;
            temp_slot_ = slot;
            break;
        }
        const int err = errno;
        unregister_temp(slot);
        if (err != EEXIST || attempt == 100)
            throw output_error(path, "cannot create the output file (" + reason(err) + "); check that the directory "
                                     "exists and is writable");
    }
    owns_fd_ = true;
    // Created with mode 0600; give the file the mode a plain open would (or keep an existing file's mode).
    const mode_t mode = exists ? (st.st_mode & 07777) : default_file_mode();
    if (::fchmod(fd_, mode) != 0) {
        const int err = errno;
        ::close(fd_);
        unregister_temp(temp_slot_);
        ::unlink(temp_path_.c_str());
        throw output_error(path, "cannot set the output file's permissions (" + reason(err) + ")");
    }
    buffer_.reserve(buffer_limit);
}

output_file::~output_file() {
    if (owns_fd_ && fd_ >= 0) ::close(fd_);
    unregister_temp(temp_slot_);
    if (!committed_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
}

void output_file::write(std::string_view text) {
    if (completed_) throw output_error(name_, "written after it was completed");
    if (text.size() >= buffer_limit) {  // a large block (an array's body) goes out as it is, not through the buffer
        flush();
        write_all(text);
        return;
    }
    buffer_.append(text);
    if (buffer_.size() >= buffer_limit) flush();
}

void output_file::write_all(std::string_view text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + done, std::min<std::size_t>(text.size() - done, std::size_t(1) << 30));
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            buffer_.clear();
            throw output_error(name_, "write failed (" + reason(err) + ")");
        }
        done += static_cast<std::size_t>(n);
    }
}

void output_file::flush() {
    write_all(buffer_);
    buffer_.clear();
}

void output_file::reserve(std::uint64_t bytes) {
    if (!positional() || bytes == 0) return;
    (void)::fallocate(fd_, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(bytes));  // a hint: unsupported or full, writes tell
}

void output_file::write_at(std::uint64_t offset, std::string_view bytes) {
    if (completed_) throw output_error(name_, "written after it was completed");
    if (!positional()) throw output_error(name_, "cannot be written out of order (not a regular file)");
    if (!buffer_.empty()) throw output_error(name_, "written out of order after buffered bytes");
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::pwrite(fd_, bytes.data() + done, std::min<std::size_t>(bytes.size() - done, std::size_t(1) << 30),
                                   static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw output_error(name_, "write failed (" + reason(errno) + ")");
        }
        done += static_cast<std::size_t>(n);
    }
}

void output_file::complete() {
    if (completed_) return;
    flush();
    // No fsync before the rename (output_file.hpp): if the process fails or is killed, the name holds the old file or
    // the complete new one; durability across a power loss is not promised (nor paid for: a 64 MB file took 40 ms).
    if (owns_fd_) {
        const int rc = ::close(fd_);
        fd_ = -1;
        if (rc != 0) throw output_error(name_, "cannot close (" + reason(errno) + ")");
    }
    completed_ = true;
}

void output_file::commit() {
    if (committed_) return;
    complete();
    if (!temp_path_.empty() && ::rename(temp_path_.c_str(), path_.c_str()) != 0)
        throw output_error(name_, "cannot rename the completed temporary file " + temp_path_ + " onto it (" +
                                      reason(errno) + ")");
    // Renamed: an interrupt from now on must not remove it (the slot held the temporary name, which is gone).
    unregister_temp(temp_slot_);
    temp_slot_ = -1;
    committed_ = true;
}

void commit_all(std::initializer_list<output_file*> files) {
    for (output_file* f : files)
        if (f) f->complete();
    for (output_file* f : files)
        if (f) f->commit();
}

namespace {

// The device and inode of a regular file, or nothing (missing, not regular, stdout).
std::optional<std::pair<dev_t, ino_t>> regular_identity(const std::string& path, bool is_input) {
    struct stat st{};
    if (path == "-") {
        if (!is_input || ::fstat(STDIN_FILENO, &st) != 0) return std::nullopt;
    } else if (path.empty() || ::stat(path.c_str(), &st) != 0) {
        return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) return std::nullopt;
    return std::pair{st.st_dev, st.st_ino};
}

std::string shown(const named_file& f) {
    return f.path == "-" ? f.role + " (stdin)" : f.role + " " + f.path;
}

}  // namespace

void refuse_overwriting(const std::vector<named_file>& outputs, const std::vector<named_file>& inputs) {
    const auto normalised = [](const std::string& path) {
        std::error_code ec;
        const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
        if (ec) return path;
        const std::string normal = std::filesystem::weakly_canonical(absolute, ec).string();
        return ec ? path : normal;
    };
    std::vector<std::optional<std::pair<dev_t, ino_t>>> input_ids;
    for (const auto& in : inputs) input_ids.push_back(regular_identity(in.path, true));
    const auto destroys = [](const named_file& out, const named_file& in) {
        return usage_error(out.role + " " + out.path + " is " + shown(in) + (out.path == in.path ? "" : " (the same file)") +
                           ": writing it would destroy that input; choose another output file");
    };
    // Outputs seen so far, by identity (those that exist) and by absolute, normalised path (all of them).
    std::map<std::pair<dev_t, ino_t>, std::size_t> by_identity;
    std::map<std::string, std::size_t> by_path;
    const auto same = [&](const named_file& a, const named_file& b) {
        return usage_error(a.role + " " + a.path + " and " + b.role + " " + b.path +
                           " are the same file; give each output a file of its own");
    };
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        const auto& out = outputs[k];
        if (out.path == "-" || out.path.empty()) continue;
        const auto id = regular_identity(out.path, false);
        if (id) {
            for (std::size_t i = 0; i < inputs.size(); ++i)
                if (input_ids[i] == id) throw destroys(out, inputs[i]);
            if (const auto [it, fresh] = by_identity.emplace(*id, k); !fresh) throw same(outputs[it->second], out);
        }
        const std::string normal = normalised(out.path);
        for (const auto& in : inputs)
            if (in.built_when_missing && normalised(in.path) == normal) throw destroys(out, in);
        if (const auto [it, fresh] = by_path.emplace(normal, k); !fresh) throw same(outputs[it->second], out);
    }
}

void require_extension(const std::string& path, const std::string& option, const std::vector<std::string>& extensions,
                       const std::string& what) {
    if (path.empty() || path == "-") return;
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    std::string e;
    if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) e = path.substr(dot + 1);
    for (auto& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& x : extensions)
        if (e == x) return;
    std::string names;
    for (std::size_t k = 0; k < extensions.size(); ++k)
        names += (k == 0 ? "." : k + 1 == extensions.size() ? " or ." : ", .") + extensions[k];
    throw usage_error(option + " " + path + ": " + what + "; name it " + names);
}

void require_output_folder(const std::string& path, const std::string& role) {
    if (path.empty() || path == "-") return;
    const auto slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return;  // the working folder, or the root
    const std::string folder = path.substr(0, slash);
    struct stat st{};
    if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw output_error(path, "cannot write " + role + ": the folder " + folder + " does not exist");
}

void check_writable_folder(const std::string& path) {
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    if (!std::filesystem::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
        throw output_error(path, "its folder does not exist or is not writable");
}

}  // namespace swgpu::io
