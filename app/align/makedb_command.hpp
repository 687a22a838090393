// `swgpu makedb DB.fa PREFIX`: writes PREFIX.swdb, a memory-mappable database that `swgpu align` reads in place of
// the FASTA file (io/align/database_file.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace swgpu::app {

class makedb_command {
public:
    explicit makedb_command(CLI::App& app);
    bool selected() const { return sub_->parsed(); }
    int run();

private:
    CLI::App* sub_ = nullptr;
    std::string source_, prefix_, seqtype_ = "auto";
    bool skip_bad_ = false, quiet_ = false;
};

}  // namespace swgpu::app
