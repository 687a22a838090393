#include "io/sequence_reader.hpp"

#include <htslib/bgzf.h>
#include <htslib/kseq.h>

#include "core/error.hpp"

KSEQ_INIT(BGZF*, bgzf_read)

namespace swgpu::io {

struct sequence_reader::impl {
    std::string path;
    read_options opt;
    BGZF* fp = nullptr;
    kseq_t* ks = nullptr;
    std::uint64_t records = 0, skipped = 0;
    bool done = false;
};

sequence_reader::sequence_reader(const std::string& path, read_options opt) : p_(std::make_unique<impl>()) {
    p_->path = path;
    p_->opt = opt;
    p_->fp = path == "-" ? bgzf_dopen(0, "r") : bgzf_open(path.c_str(), "r");
    if (!p_->fp) throw input_error(path, "cannot open file for reading");
    p_->ks = kseq_init(p_->fp);
}

sequence_reader::~sequence_reader() {
    if (p_->ks) kseq_destroy(p_->ks);
    if (p_->fp) bgzf_close(p_->fp);
}

bool sequence_reader::read_chunk(sequence_set& out, std::uint64_t max_residues) {
    if (out.source.empty()) out.source = p_->path;
    std::uint64_t added = 0;
    bool any = false;
    while (!p_->done && (max_residues == 0 || added < max_residues)) {
        const int r = kseq_read(p_->ks);
        if (r == -1) {
            p_->done = true;
            break;
        }
        const std::string where = p_->path + ":" + std::to_string(p_->records + 1);
        if (r < -1) throw input_error(where, r == -2 ? "FASTQ quality string missing or of a different length"
                                                     : "read error or corrupt compressed data");
        ++p_->records;
        std::string name(p_->ks->name.s, p_->ks->name.l);
        if (p_->ks->seq.l == 0) throw input_error(p_->path + ":" + name, "empty sequence record");
        out.add(name, std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(p_->ks->seq.s), p_->ks->seq.l));
        added += p_->ks->seq.l;
        any = true;
    }
    return any;
}

std::uint64_t sequence_reader::records_read() const { return p_->records; }
std::uint64_t sequence_reader::records_skipped() const { return p_->skipped; }

sequence_set read_all(const std::string& path, read_options opt) {
    sequence_reader r(path, opt);
    sequence_set s;
    s.source = path;
    r.read_chunk(s, 0);
    return s;
}

}  // namespace swgpu::io
