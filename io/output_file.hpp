// Where results go: stdout, or a file written atomically (docs/conventions.md).
//
// A regular file (or a name that does not exist yet) is written to a temporary file in the same directory
// (".NAME.swgpu-XXXXXX"), which commit() completes (the buffered bytes written), closes and renames onto NAME. Until
// commit() the destination is untouched; if the run fails (an exception, a write error) or is interrupted, the
// temporary file is removed, so a failed run leaves no file behind (an earlier file of that name as it was) and never a
// half-written one. The file is not flushed to the disk (no fsync, as NumPy's np.save and OpenCV's imwrite do not):
// if the process fails or is killed the name holds the old file or the complete new one, but after a power loss or a
// crash of the system it may hold neither. Names that are not regular files (/dev/stdout, a FIFO, a terminal) cannot
// be replaced by renaming and are written directly.
//
// Every failure to create, write, flush or rename is a swgpu::error with exit code output_failed (5) naming the file.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace swgpu::io {

// Where formatted text goes: an output file, or a string in memory (text_buffer: a program that prints what a command
// prints, a server's answer). The formats of io/ write to one.
class text_sink {
public:
    virtual ~text_sink() = default;
    virtual void write(std::string_view text) = 0;
    // The name shown in messages.
    virtual const std::string& name() const = 0;
};

// Text kept in memory: what an output file would hold.
class text_buffer final : public text_sink {
public:
    explicit text_buffer(std::string name = "memory") : name_(std::move(name)) {}
    void write(std::string_view text) override { text_.append(text); }
    const std::string& name() const override { return name_; }
    const std::string& text() const& { return text_; }
    std::string text() && { return std::move(text_); }

private:
    std::string name_, text_;
};

class output_file final : public text_sink {
public:
    // "-" or "" is stdout. Creates the temporary file now, so an unwritable destination fails before any work.
    explicit output_file(const std::string& path);
    ~output_file() override;  // removes the temporary file unless committed
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    void write(std::string_view text) override;  // buffered
    void commit();                      // write what is buffered, close, rename: the results are now complete at `path`
    // The first half of commit(): writes what is buffered and closes the file, leaving the rename to commit(). A command
    // with several outputs completes every one before it renames any (commit_all), so that a write error in one of
    // them (a full disk) leaves none of them behind.
    void complete();

    // Whether write_at works: a regular file (its temporary file), not stdout or a FIFO.
    bool positional() const { return !temp_path_.empty(); }
    // Writes `bytes` at byte `offset` of the file (pwrite), unbuffered: a file written this way is written only this
    // way (no write()), and the caller covers every byte up to its end. Safe to call from several threads at once, for
    // disjoint ranges. Only where positional().
    void write_at(std::uint64_t offset, std::string_view bytes);
    // Announces that the file will hold `bytes` bytes: a regular file gets its blocks allocated now (fallocate, size
    // unchanged), where the file system can. On ext4 this also spares commit() the write-back that a rename onto an
    // existing file starts for blocks not yet allocated (its auto_da_alloc), tens of ms for 64 MB. A hint only.
    void reserve(std::uint64_t bytes);

    // The name shown in messages ("stdout" for "-").
    const std::string& name() const override { return name_; }

private:
    void flush();
    void write_all(std::string_view text);  // unbuffered, every byte or an output_error

    std::string path_, name_, temp_path_;
    int temp_slot_ = -1;  // registration for removal on SIGINT/SIGTERM/SIGHUP (atomic_file.cpp)
    int fd_ = -1;
    bool owns_fd_ = false;
    bool completed_ = false;
    bool committed_ = false;
    std::string buffer_;
};

// Commits several outputs together: completes each (every byte written, closed), then renames each. A failure to write
// any of them leaves none at its name (their temporary files are removed as the objects go); only a failed rename,
// after the earlier ones were renamed, could leave some. Null pointers (outputs not asked for) are skipped.
void commit_all(std::initializer_list<output_file*> files);

// Removes the temporary file of every output not yet complete (async-signal-safe: for a handler of a fatal signal).
void remove_temporary_files() noexcept;

// A file a command reads or writes, with the words that name it in messages ("-o", "the database DB").
struct named_file {
    std::string role;  // e.g. "-o", "--dotplot", "the database", "the query file"
    std::string path;  // "-": stdin for an input, stdout for an output (never refused)
    bool built_when_missing = false;  // an input the run writes when it is missing (an index): compared by name too
};

// Refuses, before anything is written, a run whose output would destroy one of its inputs or another output: a usage
// error (exit 2, one line) when an output exists and is the same file as an input (same device and inode, so
// relative paths, "./" and symbolic or hard links are caught; stdin counts as the file it was redirected from), or
// names an input built_when_missing (by absolute, normalised path, whether or not it exists yet), or when two outputs
// name the same file. Only regular files are compared (writing to /dev/stdout or a FIFO replaces
// nothing).
void refuse_overwriting(const std::vector<named_file>& outputs, const std::vector<named_file>& inputs);

// Refuses (usage error, exit 2, one line) an output whose name ends in an extension other than `extensions` (each
// without its dot, compared ignoring case), so that `--plot p.png` does not write SVG into a .png: "--plot p.png: the
// plot is SVG; name it .svg". "-" (stdout) and an empty name pass.
void require_extension(const std::string& path, const std::string& option, const std::vector<std::string>& extensions,
                       const std::string& what);

// Refuses (output_error, exit 5, one line) an output whose folder does not exist, before any work; `role` names the
// output. "-" and "" pass.
void require_output_folder(const std::string& path, const std::string& role);
// Refuses (output_error) `path` unless its folder exists and is writable (an output opened later, as --batch's).
void check_writable_folder(const std::string& path);

}  // namespace swgpu::io
