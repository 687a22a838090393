// libswgpu_fault.so: failures of the file system, injected into a process through LD_PRELOAD (tests/test_faults.cpp).
// Built for the tests only, on Linux. It replaces the C library's write, pwrite, writev, fallocate, posix_fallocate,
// read, pread, readv, open, openat, creat and the mkstemp family; each passes the call on to the C library's own
// function (dlsym(RTLD_NEXT)) unless the environment asks for a failure:
//
//   SWGPU_FAULT_PATH=TEXT         the files concerned: those whose path (the name an open was given, or for a
//                                 descriptor the target of /proc/self/fd/N) contains TEXT; unset, no write or read
//                                 fails
//   SWGPU_FAULT_WRITE_AFTER=N     writes to those files succeed for N bytes in all (the call that crosses N writes
//                                 what is left up to N and returns that short count), then fail with SWGPU_FAULT_ERRNO;
//                                 fallocate of a range ending past N fails the same way
//   SWGPU_FAULT_ERRNO=E           the error of failed writes: a name (ENOSPC, EDQUOT, EFBIG, EIO, EACCES, EROFS) or a
//                                 number; ENOSPC when unset
//   SWGPU_FAULT_STALL_AFTER=N     writes to those files succeed for N bytes in all (as above), then the write that
//                                 would go past N stops the calling thread for good: the process is caught in the middle
//                                 of its output, where a test sends it a signal; SWGPU_FAULT_STALL_MARK=PATH is created
//                                 (empty) when a thread stops, so the test knows when to send it
//   SWGPU_FAULT_READ_AFTER=N      reads of those files return N bytes in all, then fail with EIO
//   SWGPU_FAULT_OPEN_PATH=TEXT    opening for writing (O_WRONLY, O_RDWR or O_CREAT) or creating a temporary file whose
//                                 path contains TEXT fails with EACCES, as in a folder the user may not write
//   SWGPU_FAULT_PROBE=1           the library says "swgpu-fault: loaded" on stderr when the process starts (a test
//                                 checks with it that LD_PRELOAD works before relying on it)
//
// Only calls into the C library from outside it are seen: stdio's own writes and reads (fwrite, fread, fopen) stay
// inside the C library and pass untouched, as do mmap'ed files. Counts are per process.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

namespace {

struct settings {
    const char* path = nullptr;       // SWGPU_FAULT_PATH
    const char* open_path = nullptr;  // SWGPU_FAULT_OPEN_PATH
    long long write_after = -1;       // -1: no write faults
    long long read_after = -1;        // -1: no read faults
    long long stall_after = -1;       // -1: no stalls
    const char* stall_mark = nullptr; // SWGPU_FAULT_STALL_MARK
    int write_errno = ENOSPC;
};

settings config;
long long bytes_written = 0;  // to matching files, under the lock
long long bytes_read = 0;
int lock_word = 0;

void lock() {
    while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE)) {
    }
}
void unlock() { __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE); }

long long number(const char* name) {
    const char* v = getenv(name);
    if (!v || !*v) return -1;
    return strtoll(v, nullptr, 10);
}

int errno_named(const char* v) {
    if (!v || !*v) return ENOSPC;
    static const struct {
        const char* name;
        int value;
    } names[] = {{"ENOSPC", ENOSPC}, {"EDQUOT", EDQUOT}, {"EFBIG", EFBIG},
                 {"EIO", EIO},       {"EACCES", EACCES}, {"EROFS", EROFS}};
    for (const auto& n : names)
        if (strcmp(v, n.name) == 0) return n.value;
    const int k = atoi(v);
    return k > 0 ? k : ENOSPC;
}

__attribute__((constructor)) void load_settings() {
    config.path = getenv("SWGPU_FAULT_PATH");
    if (config.path && !*config.path) config.path = nullptr;
    config.open_path = getenv("SWGPU_FAULT_OPEN_PATH");
    if (config.open_path && !*config.open_path) config.open_path = nullptr;
    config.write_after = number("SWGPU_FAULT_WRITE_AFTER");
    config.read_after = number("SWGPU_FAULT_READ_AFTER");
    config.stall_after = number("SWGPU_FAULT_STALL_AFTER");
    config.stall_mark = getenv("SWGPU_FAULT_STALL_MARK");
    if (config.stall_mark && !*config.stall_mark) config.stall_mark = nullptr;
    config.write_errno = errno_named(getenv("SWGPU_FAULT_ERRNO"));
    const char* probe = getenv("SWGPU_FAULT_PROBE");
    if (probe && *probe) {
        static const char said[] = "swgpu-fault: loaded\n";
        ssize_t (*real_write)(int, const void*, size_t) = reinterpret_cast<ssize_t (*)(int, const void*, size_t)>(
            dlsym(RTLD_NEXT, "write"));
        if (real_write) (void)!real_write(2, said, sizeof said - 1);
    }
}

template <typename F>
F next(const char* name) {
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// Whether descriptor fd names a file whose path contains SWGPU_FAULT_PATH. Looked up on every call, not cached: a
// descriptor number is reused after close, and closes inside the C library (fclose) cannot be seen from here.
bool matches_fd(int fd) {
    if (!config.path || fd < 0) return false;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return false;
    target[n] = '\0';
    return strstr(target, config.path) != nullptr;
}

// Stops the calling thread for good (signals still reach the process), after creating the stall mark.
[[noreturn]] void stall() {
    if (config.stall_mark) {
        static auto real_open = reinterpret_cast<int (*)(const char*, int, ...)>(dlsym(RTLD_NEXT, "open"));
        const int fd = real_open(config.stall_mark, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) close(fd);
    }
    for (;;) pause();
}

// How many of `count` bytes a write to fd may write now: count itself when no fault applies, fewer when the limit is
// reached part way, and -1 (errno set) when it was reached before. With a stall limit, a write past it never returns.
long long write_allowance(int fd, size_t count) {
    if (config.stall_after >= 0 && count > 0 && matches_fd(fd)) {
        lock();
        const long long left = config.stall_after - bytes_written;
        const long long allowed = left <= 0 ? 0 : (static_cast<long long>(count) < left ? static_cast<long long>(count) : left);
        bytes_written += allowed;
        unlock();
        if (allowed == 0) stall();
        return allowed;  // the part up to the limit; the next write stops
    }
    if (config.write_after < 0 || count == 0 || !matches_fd(fd)) return static_cast<long long>(count);
    lock();
    const long long left = config.write_after - bytes_written;
    long long allowed = left <= 0 ? -1 : (static_cast<long long>(count) < left ? static_cast<long long>(count) : left);
    if (allowed > 0) bytes_written += allowed;
    unlock();
    if (allowed < 0) errno = config.write_errno;
    return allowed;
}

long long read_allowance(int fd, size_t count) {
    if (config.read_after < 0 || count == 0 || !matches_fd(fd)) return static_cast<long long>(count);
    lock();
    const long long left = config.read_after - bytes_read;
    unlock();
    if (left <= 0) {
        errno = EIO;
        return -1;
    }
    return static_cast<long long>(count) < left ? static_cast<long long>(count) : left;
}

void count_read(int fd, ssize_t n) {
    if (config.read_after < 0 || n <= 0 || !matches_fd(fd)) return;
    lock();
    bytes_read += n;
    unlock();
}

bool refused_open(const char* path, int flags) {
    if (!config.open_path || !path) return false;
    if (!(flags & (O_WRONLY | O_RDWR | O_CREAT))) return false;
    if (!strstr(path, config.open_path)) return false;
    errno = EACCES;
    return true;
}

bool refused_temp(const char* templ) {
    if (!config.open_path || !templ || !strstr(templ, config.open_path)) return false;
    errno = EACCES;
    return true;
}

size_t iov_bytes(const struct iovec* iov, int n) {
    size_t s = 0;
    for (int k = 0; k < n; ++k) s += iov[k].iov_len;
    return s;
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t count) {
    static auto real = next<ssize_t (*)(int, const void*, size_t)>("write");
    const long long allowed = write_allowance(fd, count);
    if (allowed < 0) return -1;
    return real(fd, buf, static_cast<size_t>(allowed));
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
    static auto real = next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
    const long long allowed = write_allowance(fd, count);
    if (allowed < 0) return -1;
    return real(fd, buf, static_cast<size_t>(allowed), offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
    static auto real = next<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
    const long long allowed = write_allowance(fd, count);
    if (allowed < 0) return -1;
    return real(fd, buf, static_cast<size_t>(allowed), offset);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
    static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
    const size_t total = iov_bytes(iov, iovcnt);
    const long long allowed = write_allowance(fd, total);
    if (allowed < 0) return -1;
    if (static_cast<size_t>(allowed) == total) return real(fd, iov, iovcnt);
    // A short write: the first `allowed` bytes, through the plain write of the C library.
    static auto real_write = next<ssize_t (*)(int, const void*, size_t)>("write");
    size_t done = 0;
    for (int k = 0; k < iovcnt && done < static_cast<size_t>(allowed); ++k) {
        size_t part = iov[k].iov_len;
        if (part > static_cast<size_t>(allowed) - done) part = static_cast<size_t>(allowed) - done;
        const ssize_t n = real_write(fd, iov[k].iov_base, part);
        if (n < 0) return done ? static_cast<ssize_t>(done) : -1;
        done += static_cast<size_t>(n);
        if (static_cast<size_t>(n) < part) break;
    }
    return static_cast<ssize_t>(done);
}

// Space announced past the limit is not there.
static bool fallocate_refused(int fd, long long offset, long long len) {
    return config.write_after >= 0 && matches_fd(fd) && offset + len > config.write_after - bytes_written;
}

int fallocate(int fd, int mode, off_t offset, off_t len) {
    static auto real = next<int (*)(int, int, off_t, off_t)>("fallocate");
    if (fallocate_refused(fd, offset, len)) {
        errno = config.write_errno;
        return -1;
    }
    return real(fd, mode, offset, len);
}

int fallocate64(int fd, int mode, off64_t offset, off64_t len) {
    static auto real = next<int (*)(int, int, off64_t, off64_t)>("fallocate64");
    if (fallocate_refused(fd, offset, len)) {
        errno = config.write_errno;
        return -1;
    }
    return real(fd, mode, offset, len);
}

int posix_fallocate(int fd, off_t offset, off_t len) {
    static auto real = next<int (*)(int, off_t, off_t)>("posix_fallocate");
    if (fallocate_refused(fd, offset, len)) return config.write_errno;  // returns the error, errno untouched
    return real(fd, offset, len);
}

int posix_fallocate64(int fd, off64_t offset, off64_t len) {
    static auto real = next<int (*)(int, off64_t, off64_t)>("posix_fallocate64");
    if (fallocate_refused(fd, offset, len)) return config.write_errno;
    return real(fd, offset, len);
}

ssize_t read(int fd, void* buf, size_t count) {
    static auto real = next<ssize_t (*)(int, void*, size_t)>("read");
    const long long allowed = read_allowance(fd, count);
    if (allowed < 0) return -1;
    const ssize_t n = real(fd, buf, static_cast<size_t>(allowed));
    count_read(fd, n);
    return n;
}

ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
    static auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread");
    const long long allowed = read_allowance(fd, count);
    if (allowed < 0) return -1;
    const ssize_t n = real(fd, buf, static_cast<size_t>(allowed), offset);
    count_read(fd, n);
    return n;
}

ssize_t pread64(int fd, void* buf, size_t count, off64_t offset) {
    static auto real = next<ssize_t (*)(int, void*, size_t, off64_t)>("pread64");
    const long long allowed = read_allowance(fd, count);
    if (allowed < 0) return -1;
    const ssize_t n = real(fd, buf, static_cast<size_t>(allowed), offset);
    count_read(fd, n);
    return n;
}

ssize_t readv(int fd, const struct iovec* iov, int iovcnt) {
    static auto real = next<ssize_t (*)(int, const struct iovec*, int)>("readv");
    const size_t total = iov_bytes(iov, iovcnt);
    const long long allowed = read_allowance(fd, total);
    if (allowed < 0) return -1;
    if (static_cast<size_t>(allowed) < total) {  // a short read: into the first buffer(s), through plain read
        static auto real_read = next<ssize_t (*)(int, void*, size_t)>("read");
        size_t done = 0;
        for (int k = 0; k < iovcnt && done < static_cast<size_t>(allowed); ++k) {
            size_t part = iov[k].iov_len;
            if (part > static_cast<size_t>(allowed) - done) part = static_cast<size_t>(allowed) - done;
            const ssize_t n = real_read(fd, iov[k].iov_base, part);
            if (n < 0) return done ? static_cast<ssize_t>(done) : -1;
            done += static_cast<size_t>(n);
            if (static_cast<size_t>(n) < part) break;
        }
        count_read(fd, static_cast<ssize_t>(done));
        return static_cast<ssize_t>(done);
    }
    const ssize_t n = real(fd, iov, iovcnt);
    count_read(fd, n);
    return n;
}

// open and openat take a mode only with O_CREAT or O_TMPFILE.
#define SWGPU_FAULT_MODE(flags, mode)                                        \
    mode_t mode = 0;                                                         \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                   \
        va_list ap;                                                          \
        va_start(ap, flags);                                                 \
        mode = static_cast<mode_t>(va_arg(ap, int));                         \
        va_end(ap);                                                          \
    }

int open(const char* path, int flags, ...) {
    static auto real = next<int (*)(const char*, int, ...)>("open");
    SWGPU_FAULT_MODE(flags, mode)
    if (refused_open(path, flags)) return -1;
    return real(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
    static auto real = next<int (*)(const char*, int, ...)>("open64");
    SWGPU_FAULT_MODE(flags, mode)
    if (refused_open(path, flags)) return -1;
    return real(path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
    static auto real = next<int (*)(int, const char*, int, ...)>("openat");
    SWGPU_FAULT_MODE(flags, mode)
    if (refused_open(path, flags)) return -1;
    return real(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
    static auto real = next<int (*)(int, const char*, int, ...)>("openat64");
    SWGPU_FAULT_MODE(flags, mode)
    if (refused_open(path, flags)) return -1;
    return real(dirfd, path, flags, mode);
}

int creat(const char* path, mode_t mode) {
    static auto real = next<int (*)(const char*, mode_t)>("creat");
    if (refused_open(path, O_CREAT | O_WRONLY)) return -1;
    return real(path, mode);
}

// The C library's mkstemp family opens its file inside the library, unseen by open above.
int mkstemp(char* templ) {
    static auto real = next<int (*)(char*)>("mkstemp");
    if (refused_temp(templ)) return -1;
    return real(templ);
}

int mkostemp(char* templ, int flags) {
    static auto real = next<int (*)(char*, int)>("mkostemp");
    if (refused_temp(templ)) return -1;
    return real(templ, flags);
}

int mkstemps(char* templ, int suffixlen) {
    static auto real = next<int (*)(char*, int)>("mkstemps");
    if (refused_temp(templ)) return -1;
    return real(templ, suffixlen);
}

int mkostemps(char* templ, int suffixlen, int flags) {
    static auto real = next<int (*)(char*, int, int)>("mkostemps");
    if (refused_temp(templ)) return -1;
    return real(templ, suffixlen, flags);
}

}  // extern "C"
