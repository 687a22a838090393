#include "app/makedb_command.hpp"

#include <iostream>

#include "io/database_file.hpp"

namespace swgpu::app {

makedb_command::makedb_command(CLI::App& app) {
    sub_ = app.add_subcommand("makedb", "Write a reusable, memory-mappable database (PREFIX.swdb) from FASTA/FASTQ");
    sub_->add_option("DB", source_, "Database sequences: FASTA or FASTQ, plain, gzip or bgzip, or - for stdin")->required();
    sub_->add_option("PREFIX", prefix_, "Output prefix: PREFIX.swdb is written (atomically)")->required();
    sub_->add_flag("--skip-bad", skip_bad_, "Skip malformed records with a warning instead of failing");
    sub_->add_flag("-q,--quiet", quiet_, "Only errors on stderr");
}

int makedb_command::run() {
    io::read_options opt;
    opt.skip_bad = skip_bad_;
    opt.on_skip = [this](const std::string& message) {
        if (!quiet_) std::cerr << "swgpu: warning: skipped " << message << '\n';
    };
    const auto n = io::write_database(source_, prefix_, opt);
    if (!quiet_) std::cerr << "swgpu: wrote " << n << " records to " << prefix_ << ".swdb\n";
    return 0;
}

}  // namespace swgpu::app
