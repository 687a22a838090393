#include "app/align/makedb_command.hpp"

#include <algorithm>
#include <iostream>
#include <optional>

#include "io/memory.hpp"
#include "io/output_file.hpp"
#include "io/align/database_file.hpp"

namespace swgpu::app {


makedb_command::makedb_command(CLI::App& app)
    : command(app, "makedb", "Write a reusable, memory-mappable database (PREFIX.swdb) from FASTA/FASTQ") {
    sub_->add_option("DB", source_, "Database sequences: FASTA or FASTQ, plain, gzip or bgzip, or - for stdin")->required();
    sub_->add_option("PREFIX", prefix_,
                     "Output prefix: PREFIX.swdb is written (atomically); a PREFIX that ends in .swdb is the file "
                     "itself")
        ->required();
    sub_->add_option("--seqtype", seqtype_,
                     "Sequence type written into the database; auto: by the rule of swgpu align (DNA when at least "
                     "90 % of the leading records' letters are ACGTUN), every record checked against it. A search "
                     "reads the type from the database")
        ->check(CLI::IsMember({"auto", "protein", "dna"}))
        ->capture_default_str();
    sub_->add_flag("--skip-bad", skip_bad_, "Skip malformed records with a warning instead of failing");
    sub_->add_flag("-q,--quiet", quiet_, "Only errors on stderr");
}

// The input as read (a region's FILE) and the file PREFIX names.
void makedb_command::run_files(std::vector<io::named_file>& outputs, std::vector<io::named_file>& inputs) {
    outputs.push_back({"the output", io::database_output(prefix_)});
    inputs.push_back({"the input", io::parse_source(source_).path});
}

int makedb_command::run(const std::string&) {
    io::read_options opt;
    opt.skip_bad = skip_bad_;
    opt.on_skip = [this](const std::string& message) {
        if (!quiet_) std::cerr << "swgpu: warning: skipped " << message << '\n';
    };
    opt.on_warning = [this](const std::string& message) {
        if (!quiet_) std::cerr << "swgpu: warning: " << message << '\n';
    };
    const std::string target = io::database_output(prefix_);
    // Memory, before the source is read: makedb holds one chunk of up to 2^24 residues as it streams them into the
    // file (a plain file's size bounds them), then the ids and about 20 bytes a record.
    const auto size = io::plain_file_size(io::parse_source(source_).path);
    const double chunk = std::min(double(std::uint64_t(1) << 24), size ? double(*size) : 1e300);
    io::check_memory(2.0 * chunk, "makedb reads the database in chunks of up to 16.8 M residues (and their ids)",
                     "free memory, or split the database");
    const std::optional<seq_type> forced = seqtype_ == "dna"       ? std::optional(seq_type::dna)
                                           : seqtype_ == "protein" ? std::optional(seq_type::protein)
                                                                   : std::nullopt;
    const auto n = io::write_database(source_, prefix_, opt, forced);
    if (!quiet_) std::cerr << "swgpu: wrote " << n << " records to " << target << "\n";
    return 0;
}

}  // namespace swgpu::app
